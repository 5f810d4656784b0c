// Upstream bufferization of argmax.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize argmax.mlir
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @argmax(%arg0: tensor<2x5xf32>) -> tensor<2xi64> {
    %0 = bufferization.to_buffer %arg0 : tensor<2x5xf32> to memref<2x5xf32, strided<[?, ?], offset: ?>>
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %alloc = memref.alloc() alignment = 64 : memref<2xi64>
    linalg.fill ins(%c0_i64 : i64) outs(%alloc : memref<2xi64>)
    %alloc_0 = memref.alloc() alignment = 64 : memref<2xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_0 : memref<2xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%0 : memref<2x5xf32, strided<[?, ?], offset: ?>>) outs(%alloc_0, %alloc : memref<2xf32>, memref<2xi64>) {
    ^bb0(%in: f32, %out: f32, %out_1: i64):
      %2 = linalg.index 1 : index
      %3 = arith.index_cast %2 : index to i64
      %4 = arith.maximumf %in, %out : f32
      %5 = arith.cmpf ogt, %in, %out : f32
      %6 = arith.select %5, %3, %out_1 : i64
      linalg.yield %4, %6 : f32, i64
    }
    %1 = bufferization.to_tensor %alloc : memref<2xi64> to tensor<2xi64>
    return %1 : tensor<2xi64>
  }
}

