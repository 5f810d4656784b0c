// RUN: xrelay-opt %s -p form-kernels -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.linspace(-6, 6, 48, dtype=np.float32).reshape(1, 4, 4, 3))"
// RUN: xrelay-run %t.mlir --input x=%t.x.npy -o %t.out.npy
// RUN: python -c "import numpy as np; x = np.load('%t.x.npy').astype(np.float64); v = np.einsum('nhwc,cf->nhwf', x, np.full((3, 3), 0.5)) + 0.25; out = np.load('%t.out.npy'); assert np.allclose(out, v / (1 + np.exp(-v)), rtol=1e-5), out"

// A 1x1 convolution, its bias and SiLU (x * sigmoid(x): negate, exp, + 1, 1 / _, then times the
// biased value again): one kernel. The biased value %a has two readers, the negation and the final
// multiply, both in the kernel, so the chain goes on past it (the compiled chain keeps %a for the
// multiply: tests/test_native_window.py).
func.func @main(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x3x3xf32>
  %b = arith.constant dense<0.25> : tensor<1x1x1x3xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<1x4x4x3xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %c = linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x3xf32>, tensor<1x1x3x3xf32>) outs(%f0 : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %e1 = tensor.empty() : tensor<1x4x4x3xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x4x4x3xf32>, tensor<1x1x1x3xf32>) outs(%e1 : tensor<1x4x4x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x3xf32>
  %e2 = tensor.empty() : tensor<1x4x4x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x4x4x3xf32>) outs(%e2 : tensor<1x4x4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.negf %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x3xf32>
  %e3 = tensor.empty() : tensor<1x4x4x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n : tensor<1x4x4x3xf32>) outs(%e3 : tensor<1x4x4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x3xf32>
  %e4 = tensor.empty() : tensor<1x4x4x3xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x4x4x3xf32>) outs(%e4 : tensor<1x4x4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %one, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x3xf32>
  %e5 = tensor.empty() : tensor<1x4x4x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%u : tensor<1x4x4x3xf32>) outs(%e5 : tensor<1x4x4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.divf %one, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x3xf32>
  %e6 = tensor.empty() : tensor<1x4x4x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %g : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) outs(%e6 : tensor<1x4x4x3xf32>) {
  ^bb0(%p: f32, %s: f32, %o: f32):
    %r = arith.mulf %p, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x3xf32>
  func.return %y : tensor<1x4x4x3xf32>
}

// CHECK:      %y = kernel.dispatch {root = "conv"} -> (tensor<1x4x4x3xf32>) {
// CHECK:        %c = linalg.conv_2d_nhwc_hwcf
// CHECK:        %a = linalg.generic
// CHECK:        %n = linalg.generic
// CHECK:        %t = linalg.generic
// CHECK:        %u = linalg.generic
// CHECK:        %g = linalg.generic
// CHECK:        %y_1 = linalg.generic {{.*}} ins(%a, %g : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>)
// CHECK:        kernel.yield %y_1 : tensor<1x4x4x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y : tensor<1x4x4x3xf32>
