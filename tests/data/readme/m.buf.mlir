// What README.md's upstream route makes of tests/test_readme.py's m.onnx (IREE 3.13), for its fast run
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
module {
  func.func @m(%arg0: memref<1x3x224x224xf32, strided<[?, ?, ?, ?], offset: ?>>, %arg1: memref<1x3x1x1xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x1x224x224xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x1x224x224xf32>
    linalg.fill ins(%cst : f32) outs(%alloc : memref<1x1x224x224xf32>)
    linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : memref<1x3x224x224xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<1x3x1x1xf32, strided<[?, ?, ?, ?], offset: ?>>) outs(%alloc : memref<1x1x224x224xf32>)
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc : memref<1x1x224x224xf32>) outs(%alloc : memref<1x1x224x224xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.cmpf ugt, %in, %cst : f32
      %1 = arith.select %0, %in, %cst : f32
      linalg.yield %1 : f32
    }
    %cast = memref.cast %alloc : memref<1x1x224x224xf32> to memref<1x1x224x224xf32, strided<[?, ?, ?, ?], offset: ?>>
    return %alloc : memref<1x1x224x224xf32>
  }
}

