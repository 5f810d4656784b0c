// RUN: xrelay-opt %s -p drop-unit-dims -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-run %t.mlir --input p=%S/Inputs/unit_p.npy --input b=%S/Inputs/unit_b.npy --input s=%S/Inputs/unit_s.npy --input r=%S/Inputs/unit_r.npy -o %t.npz
// RUN: python -c "import numpy as np; i = {k: np.load('%S/Inputs/unit_' + k + '.npy') for k in 'pbsr'}; r = np.load('%t.npz'); got = [r[k] for k in sorted(r)]; x = i['p'][None]; assert np.allclose(got[0], x + i['b']) and np.allclose(got[1], x * i['s'] + i['r']) and np.allclose(got[2], -i['r']), got"

// A matmul-like 5x6 value reshaped to 1x5x6: the generics reading it run over 5x6 and read %p itself;
// %s and %r keep their shapes, read at index 0 on the dropped loop. The negation reads no reshape and
// stays 3-D; the reshapes and empties nothing reads any more go.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
#row = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
func.func @main(%p: tensor<5x6xf32>, %b: tensor<6xf32>, %s: tensor<1x1x6xf32>, %r: tensor<1x5x6xf32>) -> (tensor<1x5x6xf32>, tensor<1x5x6xf32>, tensor<1x5x6xf32>) {
  %c = tensor.collapse_shape %p [[0, 1]] : tensor<5x6xf32> into tensor<30xf32>
  %x = tensor.expand_shape %c [[0, 1, 2]] output_shape [1, 5, 6] : tensor<30xf32> into tensor<1x5x6xf32>
  %e = tensor.empty() : tensor<1x5x6xf32>
  %y = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : tensor<1x5x6xf32>, tensor<6xf32>) outs(%e : tensor<1x5x6xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %sum = arith.addf %a, %bb : f32
    linalg.yield %sum : f32
  } -> tensor<1x5x6xf32>
  %z = linalg.generic {indexing_maps = [#id3, #row, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s, %r : tensor<1x5x6xf32>, tensor<1x1x6xf32>, tensor<1x5x6xf32>) outs(%e : tensor<1x5x6xf32>) {
  ^bb0(%a: f32, %ss: f32, %rr: f32, %o: f32):
    %m = arith.mulf %a, %ss : f32
    %t = arith.addf %m, %rr : f32
    linalg.yield %t : f32
  } -> tensor<1x5x6xf32>
  %w = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<1x5x6xf32>) outs(%e : tensor<1x5x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x5x6xf32>
  func.return %y, %z, %w : tensor<1x5x6xf32>, tensor<1x5x6xf32>, tensor<1x5x6xf32>
}

// CHECK-NOT:  tensor.collapse_shape
// CHECK:      %e = tensor.empty() : tensor<1x5x6xf32>
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<5x6xf32>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %b : tensor<5x6xf32>, tensor<6xf32>) outs(%[[E2]] : tensor<5x6xf32>)
// CHECK:      %{{.*}} = tensor.expand_shape %[[Y]] {{\[}}[0 : i64, 1 : i64], [2 : i64]] output_shape [1, 5, 6] : tensor<5x6xf32> into tensor<1x5x6xf32>
// CHECK:      linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, 0, d1)>, affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %s, %r : tensor<5x6xf32>, tensor<1x1x6xf32>, tensor<1x5x6xf32>)
// CHECK:      tensor.expand_shape
// CHECK:      %w = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<1x5x6xf32>) outs(%e : tensor<1x5x6xf32>)
