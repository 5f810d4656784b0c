// Upstream bufferization of avgpool_include.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize avgpool_include.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
module {
  func.func @avgpool_include(%arg0: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
    %0 = bufferization.to_buffer %arg0 : tensor<1x2x5x5xf32> to memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 4.000000e+00 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x2x7x7xf32>
    linalg.map outs(%alloc : memref<1x2x7x7xf32>)
      (%init: f32) {
        %2 = linalg.index 0 : index
        %3 = linalg.index 1 : index
        %4 = linalg.index 2 : index
        %5 = linalg.index 3 : index
        linalg.yield %cst : f32
      }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 2, 5, 5] [1, 1, 1, 1] : memref<1x2x7x7xf32> to memref<1x2x5x5xf32, strided<[98, 49, 7, 1], offset: 8>>
    memref.copy %0, %subview : memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x2x5x5xf32, strided<[98, 49, 7, 1], offset: 8>>
    %alloc_1 = memref.alloc() alignment = 64 : memref<1x2x3x3xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_1 : memref<1x2x3x3xf32>)
    %alloc_2 = memref.alloc() alignment = 64 : memref<2x2xf32>
    linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%alloc, %alloc_2 : memref<1x2x7x7xf32>, memref<2x2xf32>) outs(%alloc_1 : memref<1x2x3x3xf32>)
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_1 : memref<1x2x3x3xf32>) outs(%alloc_1 : memref<1x2x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %2 = arith.divf %in, %cst_0 : f32
      linalg.yield %2 : f32
    }
    %1 = bufferization.to_tensor %alloc_1 : memref<1x2x3x3xf32> to tensor<1x2x3x3xf32>
    return %1 : tensor<1x2x3x3xf32>
  }
}

