// RUN: xrelay-opt %s -p select-to-minmax -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-run %s --input x=%S/Inputs/select_x.npy -o %t.before.npz
// RUN: xrelay-run %t.mlir --input x=%S/Inputs/select_x.npy -o %t.after.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t.before.npz'), np.load('%t.after.npz'); assert sorted(a) == sorted(b) and all(np.allclose(a[k], b[k], equal_nan=True) for k in a), [(a[k], b[k]) for k in a]"
// RUN: env XRELAY_NATIVE=0 xrelay-run %s --level loops --input x=%S/Inputs/select_x.npy -o %t.loops.npz
// RUN: xrelay-run %s --level loops --input x=%S/Inputs/select_x.npy -o %t.native.npz
// RUN: python -c "import numpy as np; a = np.load('%t.before.npz'); assert all(np.allclose(a[k], np.load(f)[k], equal_nan=True) for f in ('%t.loops.npz', '%t.native.npz') for k in a)"

// torch-mlir's ReLU (select of ugt, NaN kept) becomes maximumf; the same with the comparison's operands
// swapped and ult is maximumf too; ule is minimumf; an ordered ogt (a NaN selects 0) stays. Every
// executor (linalg, loops on numpy and compiled) gives unordered predicates NaN -> true.
#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ugt, %in, %zero : f32
    %r = arith.select %p, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %swapped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ult, %zero, %in : f32
    %r = arith.select %p, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %min = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ule, %in, %zero : f32
    %r = arith.select %p, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %ordered = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %p, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  func.return %relu, %swapped, %min, %ordered : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// CHECK:      linalg.generic
// CHECK-NOT:    arith.cmpf
// CHECK:        arith.maximumf %in, %zero : f32
// CHECK:      linalg.generic
// CHECK-NOT:    arith.cmpf
// CHECK:        arith.maximumf %{{.*}}, %zero : f32
// CHECK:      linalg.generic
// CHECK-NOT:    arith.cmpf
// CHECK:        arith.minimumf %{{.*}}, %zero : f32
// CHECK:      linalg.generic
// CHECK:        arith.cmpf ogt
// CHECK:        arith.select
