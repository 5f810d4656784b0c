// Upstream bufferization of separable_concat.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries separable_concat.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> ()>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
module {
  memref.global "private" constant @__constant_4x3x3xf32 : memref<4x3x3xf32> = dense<[[[1.02045953, -1.27783251, 0.209049419], [-0.283884794, -0.226324648, -0.107798584], [-1.00999308, -0.115966186, -0.432606548]], [[1.66149974, 0.112893306, -0.176315397], [-0.140643716, -0.334023178, -0.527575254], [-0.195400491, 0.240972698, -0.119276807]], [[0.478879362, -0.0999010652, 0.0121297827], [0.772910416, 0.272552758, -0.252614379], [-0.0914194881, 0.270262569, 9.675440e-01]], [[-0.134810165, -0.121779338, 0.501156807], [-0.443229973, -0.145860121, 0.441269487], [0.290175021, 0.0457583517, 0.335052192]]]> alignment = 64
  memref.global "private" constant @__constant_xf32_0 : memref<f32> = dense<0.000000e+00> alignment = 64
  memref.global "private" constant @__constant_xf32 : memref<f32> = dense<6.000000e+00> alignment = 64
  memref.global "private" constant @__constant_4x4x1x1xf32 : memref<4x4x1x1xf32> = dense<[[[[0.138222873]], [[0.350272447]], [[-0.222383723]], [[-0.538202941]]], [[[0.0130624166]], [[-0.0263736546]], [[0.702799082]], [[3.737040e-01]]], [[[0.0969078242]], [[0.555816591]], [[-0.102761522]], [[-0.462949783]]], [[[0.292029142]], [[0.291269213]], [[-0.107414454]], [[-0.391404301]]]]> alignment = 64
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[-0.282816231, 0.102130681, -0.0959644765, -0.166861981]> alignment = 64
  func.func @separable_concat(%arg0: memref<1x4x6x6xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x8x6x6xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %1 = memref.get_global @__constant_4x4x1x1xf32 : memref<4x4x1x1xf32>
    %2 = memref.get_global @__constant_xf32 : memref<f32>
    %3 = memref.get_global @__constant_xf32_0 : memref<f32>
    %4 = memref.get_global @__constant_4x3x3xf32 : memref<4x3x3xf32>
    %cst_1 = arith.constant 3.000000e+00 : f32
    %cst_2 = arith.constant 1.000000e-03 : f32
    %cst_3 = arith.constant 1.000000e+00 : f32
    %cst_4 = arith.constant 7.500000e-01 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    linalg.map outs(%alloc : memref<1x4x8x8xf32>)
      (%init: f32) {
        %5 = linalg.index 0 : index
        %6 = linalg.index 1 : index
        %7 = linalg.index 2 : index
        %8 = linalg.index 3 : index
        linalg.yield %cst : f32
      }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x4x8x8xf32> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    memref.copy %arg0, %subview : memref<1x4x6x6xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    %alloc_5 = memref.alloc() alignment = 64 : memref<1x4x6x6xf32>
    linalg.broadcast ins(%0 : memref<4xf32>) outs(%alloc_5 : memref<1x4x6x6xf32>) dimensions = [0, 2, 3] 
    linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%alloc, %4 : memref<1x4x8x8xf32>, memref<4x3x3xf32>) outs(%alloc_5 : memref<1x4x6x6xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_5, %3, %2 : memref<1x4x6x6xf32>, memref<f32>, memref<f32>) outs(%alloc_5 : memref<1x4x6x6xf32>) {
    ^bb0(%in: f32, %in_20: f32, %in_21: f32, %out: f32):
      %5 = arith.cmpf ult, %in, %in_20 : f32
      %6 = arith.select %5, %in_20, %in : f32
      %7 = arith.cmpf ugt, %6, %in_21 : f32
      %8 = arith.select %7, %in_21, %6 : f32
      linalg.yield %8 : f32
    }
    %alloc_6 = memref.alloc() alignment = 64 : memref<1x4x6x6xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_6 : memref<1x4x6x6xf32>)
    linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%alloc_5, %1 : memref<1x4x6x6xf32>, memref<4x4x1x1xf32>) outs(%alloc_6 : memref<1x4x6x6xf32>)
    %alloc_7 = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    linalg.map outs(%alloc_7 : memref<1x4x8x8xf32>)
      (%init: f32) {
        %5 = linalg.index 0 : index
        %6 = linalg.index 1 : index
        %7 = linalg.index 2 : index
        %8 = linalg.index 3 : index
        linalg.yield %cst_0 : f32
      }
    %subview_8 = memref.subview %alloc_7[0, 0, 1, 1] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x4x8x8xf32> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    memref.copy %arg0, %subview_8 : memref<1x4x6x6xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    linalg.fill ins(%cst_0 : f32) outs(%alloc_5 : memref<1x4x6x6xf32>)
    %alloc_9 = memref.alloc() alignment = 64 : memref<3x3xf32>
    linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%alloc_7, %alloc_9 : memref<1x4x8x8xf32>, memref<3x3xf32>) outs(%alloc_5 : memref<1x4x6x6xf32>)
    %alloc_10 = memref.alloc() alignment = 64 : memref<1x8x6x6xf32>
    %subview_11 = memref.subview %alloc_10[0, 0, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1]>>
    memref.copy %alloc_6, %subview_11 : memref<1x4x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1]>>
    %subview_12 = memref.subview %alloc_10[0, 4, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1], offset: 144>>
    memref.copy %alloc_5, %subview_12 : memref<1x4x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1], offset: 144>>
    %alloc_13 = memref.alloc() alignment = 64 : memref<1x8x6x6xf32>
    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_10, %alloc_10 : memref<1x8x6x6xf32>, memref<1x8x6x6xf32>) outs(%alloc_13 : memref<1x8x6x6xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %5 = arith.mulf %in, %in_20 : f32
      linalg.yield %5 : f32
    }
    %expand_shape = memref.expand_shape %alloc_13 [[0], [1, 2], [3], [4]] output_shape [1, 1, 8, 6, 6] : memref<1x8x6x6xf32> into memref<1x1x8x6x6xf32>
    %alloc_14 = memref.alloc() alignment = 64 : memref<1x1x10x6x6xf32>
    linalg.map outs(%alloc_14 : memref<1x1x10x6x6xf32>)
      (%init: f32) {
        %5 = linalg.index 0 : index
        %6 = linalg.index 1 : index
        %7 = linalg.index 2 : index
        %8 = linalg.index 3 : index
        %9 = linalg.index 4 : index
        linalg.yield %cst : f32
      }
    %subview_15 = memref.subview %alloc_14[0, 0, 1, 0, 0] [1, 1, 8, 6, 6] [1, 1, 1, 1, 1] : memref<1x1x10x6x6xf32> to memref<1x1x8x6x6xf32, strided<[360, 360, 36, 6, 1], offset: 36>>
    memref.copy %expand_shape, %subview_15 : memref<1x1x8x6x6xf32> to memref<1x1x8x6x6xf32, strided<[360, 360, 36, 6, 1], offset: 36>>
    %alloc_16 = memref.alloc() alignment = 64 : memref<3x1x1xf32>
    %alloc_17 = memref.alloc() alignment = 64 : memref<1x10x6x6x1xf32>
    linalg.transpose ins(%alloc_14 : memref<1x1x10x6x6xf32>) outs(%alloc_17 : memref<1x10x6x6x1xf32>) permutation = [0, 2, 3, 4, 1] 
    %alloc_18 = memref.alloc() alignment = 64 : memref<1x8x6x6x1xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_18 : memref<1x8x6x6x1xf32>)
    linalg.pooling_ndhwc_sum {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%alloc_17, %alloc_16 : memref<1x10x6x6x1xf32>, memref<3x1x1xf32>) outs(%alloc_18 : memref<1x8x6x6x1xf32>)
    %alloc_19 = memref.alloc() alignment = 64 : memref<1x1x8x6x6xf32>
    linalg.transpose ins(%alloc_18 : memref<1x8x6x6x1xf32>) outs(%alloc_19 : memref<1x1x8x6x6xf32>) permutation = [0, 4, 1, 2, 3] 
    linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%alloc_19 : memref<1x1x8x6x6xf32>) outs(%alloc_19 : memref<1x1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.divf %in, %cst_1 : f32
      linalg.yield %5 : f32
    }
    %collapse_shape = memref.collapse_shape %alloc_19 [[0, 1], [2], [3], [4]] : memref<1x1x8x6x6xf32> into memref<1x8x6x6xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapse_shape : memref<1x8x6x6xf32>) outs(%alloc_13 : memref<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.mulf %in, %cst_2 : f32
      linalg.yield %5 : f32
    }
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_13 : memref<1x8x6x6xf32>) outs(%alloc_13 : memref<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.addf %in, %cst_3 : f32
      linalg.yield %5 : f32
    }
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_13 : memref<1x8x6x6xf32>) outs(%alloc_13 : memref<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = math.powf %in, %cst_4 : f32
      linalg.yield %5 : f32
    }
    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_10, %alloc_13 : memref<1x8x6x6xf32>, memref<1x8x6x6xf32>) outs(%alloc_13 : memref<1x8x6x6xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %5 = arith.divf %in, %in_20 : f32
      linalg.yield %5 : f32
    }
    %cast = memref.cast %alloc_13 : memref<1x8x6x6xf32> to memref<1x8x6x6xf32, strided<[?, ?, ?, ?], offset: ?>>
    return %alloc_13 : memref<1x8x6x6xf32>
  }
}

