// RUN: xrelay-opt %s -p form-kernels -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// A convolution with its zero fill, bias-add and ReLU epilogue and the pad of the next convolution:
// one kernel, placed at its last member. The ReLU's result is also read by the residual add, so the
// kernel yields it beside the padded tensor. The residual add after the second convolution reads
// the first kernel's result: the second kernel's epilogue.
func.func @main(%x: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x4x4xf32>
  %b = arith.constant dense<0.25> : tensor<1x1x1x4xf32>
  %zero = arith.constant 0.0 : f32
  %px = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x4xf32> to tensor<1x8x8x4xf32>
  %e0 = tensor.empty() : tensor<1x6x6x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %c0 = linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%px, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) outs(%f0 : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %e1 = tensor.empty() : tensor<1x6x6x4xf32>
  %a0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c0, %b : tensor<1x6x6x4xf32>, tensor<1x1x1x4xf32>) outs(%e1 : tensor<1x6x6x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x4xf32>
  %e2 = tensor.empty() : tensor<1x6x6x4xf32>
  %r0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a0 : tensor<1x6x6x4xf32>) outs(%e2 : tensor<1x6x6x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.maximumf %p, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x6x6x4xf32>
  %pr = tensor.pad %r0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x4xf32> to tensor<1x8x8x4xf32>
  %e3 = tensor.empty() : tensor<1x6x6x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%pr, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) outs(%f1 : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %e4 = tensor.empty() : tensor<1x6x6x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %r0 : tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) outs(%e4 : tensor<1x6x6x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x4xf32>
  func.return %sum : tensor<1x6x6x4xf32>
}

// CHECK:      func.func @main(%x: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> attributes {kernel.formed} {
// CHECK:        %px = tensor.pad %x
// CHECK:        %[[OUT:[a-z0-9_]+]], %[[PADDED:[a-z0-9_]+]] = kernel.dispatch {root = "conv"} -> (tensor<1x6x6x4xf32>, tensor<1x8x8x4xf32>) {
// CHECK-NEXT:     %e0 = tensor.empty()
// CHECK-NEXT:     %f0 = linalg.fill
// CHECK-NEXT:     %c0 = linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:     %e1 = tensor.empty()
// CHECK-NEXT:     %a0 = linalg.generic
// CHECK:          %e2 = tensor.empty()
// CHECK-NEXT:     %[[R0:.*]] = linalg.generic
// CHECK:          %[[PR:.*]] = tensor.pad %[[R0]]
// CHECK:          kernel.yield %[[R0]], %[[PR]] : tensor<1x6x6x4xf32>, tensor<1x8x8x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[K1:.*]] = kernel.dispatch {root = "conv"} -> (tensor<1x6x6x4xf32>) {
// CHECK-NEXT:     %e3 = tensor.empty()
// CHECK-NEXT:     %f1 = linalg.fill
// CHECK-NEXT:     %c1 = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[PADDED]], %w
// CHECK-NEXT:     %e4 = tensor.empty()
// CHECK-NEXT:     %[[SUM:.*]] = linalg.generic {{.*}} ins(%c1, %[[OUT]]
// CHECK:          kernel.yield %[[SUM]] : tensor<1x6x6x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[K1]] : tensor<1x6x6x4xf32>
