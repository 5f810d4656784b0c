// RUN: xrelay-opt %s -p split-elementwise-bodies -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.linspace(-8, 8, 6, dtype=np.float32).reshape(2, 3)); np.save('%t.b.npy', np.float32([0.5, -1, 2]))"
// RUN: env XRELAY_NATIVE=0 xrelay-run %s --input x=%t.x.npy --input b=%t.b.npy -o %t.before.npz
// RUN: env XRELAY_NATIVE=0 xrelay-run %t.mlir --input x=%t.x.npy --input b=%t.b.npy -o %t.after.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t.before.npz'), np.load('%t.after.npz'); assert sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a), [(a[k], b[k]) for k in a]"

// Both run on numpy (whose ufuncs are the body's scalar ops: bit-identical; the compiled chain's exp is
// within 2 ulp of numpy's, tests/test_native_window.py).
// ReLU6 then a broadcast bias (`b + _`: the step's operand order kept) becomes three one-op generics, the
// intermediate values in fresh tensor.empty outputs read with the output's map; the bias keeps its map.
// A sigmoid-like body (negate, exp, times 6) splits alike; one with math.sqrt (no one-op step of a
// kernel), and one that reads its output's value, stay as they are.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %clip = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %lo = arith.maximumf %in, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %r = arith.addf %bias, %hi : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %t = math.exp %n : f32
    %r = arith.mulf %t, %six : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %sqrt = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %t = math.sqrt %a : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%x : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    %r = arith.mulf %s, %six : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  func.return %clip, %exp, %sqrt, %acc : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK:      %e = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %0 = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%2: f32, %3: f32):
// CHECK-NEXT:   %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %lo = arith.maximumf %2, %zero : f32
// CHECK-NEXT:   linalg.yield %lo : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: %4 = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<2x3xf32>) outs(%4 : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%6: f32, %7: f32):
// CHECK-NEXT:   %hi = arith.minimumf %6, %six : f32
// CHECK-NEXT:   linalg.yield %hi : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: %clip = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%8: f32, %9: f32, %10: f32):
// CHECK-NEXT:   %r = arith.addf %9, %8 : f32
// CHECK-NEXT:   linalg.yield %r : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: %11 = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%11 : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%13: f32, %14: f32):
// CHECK-NEXT:   %n = arith.negf %13 : f32
// CHECK-NEXT:   linalg.yield %n : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: %15 = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%12 : tensor<2x3xf32>) outs(%15 : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%17: f32, %18: f32):
// CHECK-NEXT:   %t = math.exp %17 : f32
// CHECK-NEXT:   linalg.yield %t : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%19: f32, %20: f32):
// CHECK-NEXT:   %r_1 = arith.mulf %19, %six : f32
// CHECK-NEXT:   linalg.yield %r_1 : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: %sqrt = linalg.generic
// CHECK:        %a = math.absf %in : f32
// CHECK-NEXT:   %t_1 = math.sqrt %a : f32
// CHECK:      %acc = linalg.generic
// CHECK:        %s = arith.addf %in_1, %out_1 : f32
// CHECK-NEXT:   %r_2 = arith.mulf %s, %six : f32
