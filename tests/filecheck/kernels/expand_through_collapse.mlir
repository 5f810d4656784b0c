// RUN: xrelay-opt %s -p expand-through-collapse -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-run %t.mlir --input c=%S/Inputs/expand_c.npy --input b=%S/Inputs/expand_b.npy --input r=%S/Inputs/expand_r.npy --input s=%S/Inputs/expand_s.npy -o %t.npz
// RUN: python -c "import numpy as np; i = {k: np.load('%S/Inputs/expand_' + k + '.npy') for k in 'cbrs'}; r = np.load('%t.npz'); got = [r[k] for k in sorted(r)]; x = i['c'].reshape(2, 12); assert np.allclose(got[0], np.maximum(x + i['b'] + i['r'], 0)) and np.allclose(got[1], x * i['s']), got"

// A grouped result (2 images x 3 groups x 4 filters) collapsed to 2x12: the generics reading the collapse
// run over 2x3x4 and read %c itself; the bias and the residual, indexed by the collapsed loop, are
// expanded the same way; %s reads that loop through a constant and is read as it was. The ReLU reads
// the new collapse and is expanded in turn; each result is collapsed back for its readers.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @main(%c: tensor<2x3x4xf32>, %b: tensor<12xf32>, %r: tensor<2x12xf32>, %s: tensor<2x1xf32>) -> (tensor<2x12xf32>, tensor<2x12xf32>) {
  %x = tensor.collapse_shape %c [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  %e = tensor.empty() : tensor<2x12xf32>
  %y = linalg.generic {indexing_maps = [#id2, #bias, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %b, %r : tensor<2x12xf32>, tensor<12xf32>, tensor<2x12xf32>) outs(%e : tensor<2x12xf32>) {
  ^bb0(%a: f32, %bb: f32, %rr: f32, %o: f32):
    %sum = arith.addf %a, %bb : f32
    %t = arith.addf %sum, %rr : f32
    linalg.yield %t : f32
  } -> tensor<2x12xf32>
  %relu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<2x12xf32>) outs(%e : tensor<2x12xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x12xf32>
  %z = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<2x12xf32>, tensor<2x1xf32>) outs(%e : tensor<2x12xf32>) {
  ^bb0(%a: f32, %ss: f32, %o: f32):
    %m = arith.mulf %a, %ss : f32
    linalg.yield %m : f32
  } -> tensor<2x12xf32>
  func.return %relu, %z : tensor<2x12xf32>, tensor<2x12xf32>
}

// CHECK:      %[[B:.*]] = tensor.expand_shape %b {{\[}}[0 : i64, 1 : i64]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %r {{\[}}[0 : i64], [1 : i64, 2 : i64]] output_shape [2, 3, 4] : tensor<2x12xf32> into tensor<2x3x4xf32>
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %[[B]], %[[R]] : tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<2x3x4xf32>) outs(%[[E1]] : tensor<2x3x4xf32>)
// CHECK:      %[[E2:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK-NEXT: %[[RELU:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[Y]] : tensor<2x3x4xf32>) outs(%[[E2]] : tensor<2x3x4xf32>)
// CHECK:      %{{.*}} = tensor.collapse_shape %[[RELU]] {{\[}}[0 : i64], [1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<2x12xf32>
// CHECK:      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %s : tensor<2x3x4xf32>, tensor<2x1xf32>)
// CHECK:      tensor.collapse_shape
