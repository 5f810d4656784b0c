// RUN: xrelay-opt %s --verify-diagnostics --split-input-file | filecheck %s

// `linalg.index d` must name one of the enclosing op's loops, as upstream MLIR verifies (xDSL 0.75
// does not; the executors then failed on an index past the loop ranks). Found by the fuzzer.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @argmax_index_past_the_loops(%x: tensor<2x5xf32>, %m: tensor<2xf32>, %i: tensor<2xi64>) -> tensor<2xi64> {
  %0:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x5xf32>) outs(%m, %i : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %k = linalg.index 2 : index
    %k64 = arith.index_cast %k : index to i64
    %max = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %k64, %out_1 : i64
    linalg.yield %max, %sel : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  func.return %0#1 : tensor<2xi64>
}
// CHECK: expected dim (2) to be lower than the number of loops (2) of the enclosing LinalgOp

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @last_loop_is_fine(%x: tensor<2x5xf32>, %o: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x5xf32>) outs(%o : tensor<2x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %k = linalg.index 1 : index
    %k32 = arith.index_cast %k : index to i32
    %kf = arith.sitofp %k32 : i32 to f32
    %s = arith.addf %in, %kf : f32
    linalg.yield %s : f32
  } -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
// CHECK: func.func @last_loop_is_fine
// CHECK: linalg.index 1
