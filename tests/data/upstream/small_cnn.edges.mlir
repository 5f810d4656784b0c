// Upstream bufferization of small_cnn.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize small_cnn.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (d0)>
#map4 = affine_map<(d0, d1) -> (d0, 0)>
module {
  memref.global "private" constant @__constant_5xf32 : memref<5xf32> = dense<[0.358671963, 1.32245743, -0.0139146689, 1.04183972, 1.40226483]> alignment = 64
  memref.global "private" constant @__constant_5x4xf32 : memref<5x4xf32> = dense<[[-0.0757015273, 0.202114388, 0.694171965, -0.758369743], [1.420982, 0.726093769, 0.843732655, 1.16486394], [0.787588238, 0.84407866, 0.0755936131, -1.42677391], [-0.135045096, -0.76951462, -1.42274177, 0.258452803], [-0.568549454, -1.02980447, -1.04300106, 0.26841709]]> alignment = 64
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[-0.22501412, 0.0386369601, -0.0581640825, 0.0109279696]> alignment = 64
  memref.global "private" constant @__constant_4x3x3x3xf32 : memref<4x3x3x3xf32> = dense<"0x4F7F1A3D995422BDE3BC443EB9E6003DC18E24BEFC29DE3D5E4BC83EBD78913EFE2F58BE665EC2BE4C783FBE1E204B3CF78F32BFF46C86BD365FBFBED9F360BE453227BEB755C2BDE3E7FC3D4B21A03E82F11DBD88E3D13E0A594CBEC1F7D73DE5C58A3E6C0BE73C296764BEB7938DBE069D0CBEB349873DCD139BBE798480BDDBA743BDD425263EF6E2833D4B57DA3D2DDB48BEEC441FBD57D6703E1A64E53E7964C1BEE889E83EFAB9CE3ED404703E467BA23DCADFC0BDB5F3DF3E3F8C163F955D0A3FFCFFC93E1493DB3D0699B9BEC624AFBA4AAB493E6FE4C5BE54C3F23DDB0D043E07D3553E6AE1B5BE68464BBEAA1206BE7CAEB3BE5D95053F025818BE731ECA3DF2DD9EBDB038F33EB5CECA3EE190423EC43A29BF9ABB7F3C4507523E60359A3E30D23DBE33EE0B3F75D1CABEAE384BBEA99F8F3EFD1C713CA4C8193F03A7673D698442BE9BF9E7BD9C99A7BE6E40C4BE94A9413EBD88323E20D8C63E9DD067BE34B9013F2E92B0BD41D4F13EAAF304BEC2F061BED877993D636E9E3E3CD9453DDCDF33BEE802CEBE0446D7BE976C1A3E1A05983E9CE249BDBF05A5BE6A19863E23ABC4BEF50D5BBED5C63E3E"> alignment = 64
  func.func @small_cnn(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x5xf32> {
    %0 = bufferization.to_buffer %arg0 : tensor<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>>
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %c4_i64 = arith.constant 4 : i64
    %c5_i64 = arith.constant 5 : i64
    %1 = memref.get_global @__constant_4x3x3x3xf32 : memref<4x3x3x3xf32>
    %2 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %3 = memref.get_global @__constant_5x4xf32 : memref<5x4xf32>
    %4 = memref.get_global @__constant_5xf32 : memref<5xf32>
    %c2_i64 = arith.constant 2 : i64
    %cst_1 = arith.constant 1.600000e+01 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x3x10x10xf32>
    linalg.map outs(%alloc : memref<1x3x10x10xf32>)
      (%init: f32) {
        %6 = linalg.index 0 : index
        %7 = linalg.index 1 : index
        %8 = linalg.index 2 : index
        %9 = linalg.index 3 : index
        linalg.yield %cst : f32
      }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
    memref.copy %0, %subview : memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
    %alloc_2 = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    linalg.broadcast ins(%2 : memref<4xf32>) outs(%alloc_2 : memref<1x4x8x8xf32>) dimensions = [0, 2, 3] 
    linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%alloc, %1 : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%alloc_2 : memref<1x4x8x8xf32>)
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_2 : memref<1x4x8x8xf32>) outs(%alloc_2 : memref<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = arith.cmpf ugt, %in, %cst : f32
      %7 = arith.select %6, %in, %cst : f32
      linalg.yield %7 : f32
    }
    %alloc_3 = memref.alloc() alignment = 64 : memref<1x4x10x10xf32>
    linalg.map outs(%alloc_3 : memref<1x4x10x10xf32>)
      (%init: f32) {
        %6 = linalg.index 0 : index
        %7 = linalg.index 1 : index
        %8 = linalg.index 2 : index
        %9 = linalg.index 3 : index
        linalg.yield %cst_0 : f32
      }
    %subview_4 = memref.subview %alloc_3[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1] : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
    memref.copy %alloc_2, %subview_4 : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
    %alloc_5 = memref.alloc() alignment = 64 : memref<1x4x4x4xf32>
    linalg.fill ins(%cst_0 : f32) outs(%alloc_5 : memref<1x4x4x4xf32>)
    %alloc_6 = memref.alloc() alignment = 64 : memref<3x3xf32>
    linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%alloc_3, %alloc_6 : memref<1x4x10x10xf32>, memref<3x3xf32>) outs(%alloc_5 : memref<1x4x4x4xf32>)
    %alloc_7 = memref.alloc() alignment = 64 : memref<1x4x6x6xf32>
    linalg.map outs(%alloc_7 : memref<1x4x6x6xf32>)
      (%init: f32) {
        %6 = linalg.index 0 : index
        %7 = linalg.index 1 : index
        %8 = linalg.index 2 : index
        %9 = linalg.index 3 : index
        linalg.yield %cst : f32
      }
    %subview_8 = memref.subview %alloc_7[0, 0, 1, 1] [1, 4, 4, 4] [1, 1, 1, 1] : memref<1x4x6x6xf32> to memref<1x4x4x4xf32, strided<[144, 36, 6, 1], offset: 7>>
    memref.copy %alloc_5, %subview_8 : memref<1x4x4x4xf32> to memref<1x4x4x4xf32, strided<[144, 36, 6, 1], offset: 7>>
    linalg.fill ins(%cst : f32) outs(%alloc_5 : memref<1x4x4x4xf32>)
    linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%alloc_7, %alloc_6 : memref<1x4x6x6xf32>, memref<3x3xf32>) outs(%alloc_5 : memref<1x4x4x4xf32>)
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_5 : memref<1x4x4x4xf32>) outs(%alloc_5 : memref<1x4x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = linalg.index 2 : index
      %7 = arith.index_cast %6 : index to i64
      %8 = arith.subi %7, %c1_i64 : i64
      %9 = arith.addi %7, %c2_i64 : i64
      %10 = arith.minsi %9, %c5_i64 : i64
      %11 = arith.minsi %10, %c4_i64 : i64
      %12 = arith.subi %c1_i64, %7 : i64
      %13 = arith.maxsi %12, %c0_i64 : i64
      %14 = arith.subi %11, %8 : i64
      %15 = arith.subi %14, %13 : i64
      %16 = arith.maxsi %15, %c0_i64 : i64
      %17 = linalg.index 3 : index
      %18 = arith.index_cast %17 : index to i64
      %19 = arith.subi %18, %c1_i64 : i64
      %20 = arith.addi %18, %c2_i64 : i64
      %21 = arith.minsi %20, %c5_i64 : i64
      %22 = arith.minsi %21, %c4_i64 : i64
      %23 = arith.subi %c1_i64, %18 : i64
      %24 = arith.maxsi %23, %c0_i64 : i64
      %25 = arith.subi %22, %19 : i64
      %26 = arith.subi %25, %24 : i64
      %27 = arith.maxsi %26, %c0_i64 : i64
      %28 = arith.muli %16, %27 : i64
      %29 = arith.sitofp %28 : i64 to f32
      %30 = arith.divf %in, %29 : f32
      linalg.yield %30 : f32
    }
    %alloc_9 = memref.alloc() alignment = 64 : memref<1x4x1x1xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_9 : memref<1x4x1x1xf32>)
    %alloc_10 = memref.alloc() alignment = 64 : memref<4x4xf32>
    linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%alloc_5, %alloc_10 : memref<1x4x4x4xf32>, memref<4x4xf32>) outs(%alloc_9 : memref<1x4x1x1xf32>)
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_9 : memref<1x4x1x1xf32>) outs(%alloc_9 : memref<1x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = arith.divf %in, %cst_1 : f32
      linalg.yield %6 : f32
    }
    %collapse_shape = memref.collapse_shape %alloc_9 [[0], [1, 2, 3]] : memref<1x4x1x1xf32> into memref<1x4xf32>
    %alloc_11 = memref.alloc() alignment = 64 : memref<4x5xf32>
    linalg.transpose ins(%3 : memref<5x4xf32>) outs(%alloc_11 : memref<4x5xf32>) permutation = [1, 0] 
    %alloc_12 = memref.alloc() alignment = 64 : memref<1x5xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_12 : memref<1x5xf32>)
    linalg.matmul ins(%collapse_shape, %alloc_11 : memref<1x4xf32>, memref<4x5xf32>) outs(%alloc_12 : memref<1x5xf32>)
    linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%alloc_12, %4 : memref<1x5xf32>, memref<5xf32>) outs(%alloc_12 : memref<1x5xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %6 = arith.addf %in, %in_16 : f32
      linalg.yield %6 : f32
    }
    %alloc_13 = memref.alloc() alignment = 64 : memref<1xi64>
    linalg.fill ins(%c0_i64 : i64) outs(%alloc_13 : memref<1xi64>)
    %alloc_14 = memref.alloc() alignment = 64 : memref<1xf32>
    linalg.fill ins(%cst_0 : f32) outs(%alloc_14 : memref<1xf32>)
    linalg.generic {indexing_maps = [#map1, #map3, #map3], iterator_types = ["parallel", "reduction"]} ins(%alloc_12 : memref<1x5xf32>) outs(%alloc_14, %alloc_13 : memref<1xf32>, memref<1xi64>) {
    ^bb0(%in: f32, %out: f32, %out_16: i64):
      %6 = linalg.index 1 : index
      %7 = arith.index_cast %6 : index to i64
      %8 = arith.maximumf %in, %out : f32
      %9 = arith.cmpf ogt, %in, %out : f32
      %10 = arith.select %9, %7, %out_16 : i64
      linalg.yield %8, %10 : f32, i64
    }
    %expand_shape = memref.expand_shape %alloc_14 [[0, 1]] output_shape [1, 1] : memref<1xf32> into memref<1x1xf32>
    linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel"]} ins(%alloc_12, %expand_shape : memref<1x5xf32>, memref<1x1xf32>) outs(%alloc_12 : memref<1x5xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %6 = arith.subf %in, %in_16 : f32
      linalg.yield %6 : f32
    }
    linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%alloc_12 : memref<1x5xf32>) outs(%alloc_12 : memref<1x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = math.exp %in : f32
      linalg.yield %6 : f32
    }
    %alloc_15 = memref.alloc() alignment = 64 : memref<1x1xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_15 : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#map1, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc_12 : memref<1x5xf32>) outs(%alloc_15 : memref<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = arith.addf %in, %out : f32
      linalg.yield %6 : f32
    }
    linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel"]} ins(%alloc_12, %alloc_15 : memref<1x5xf32>, memref<1x1xf32>) outs(%alloc_12 : memref<1x5xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %6 = arith.divf %in, %in_16 : f32
      linalg.yield %6 : f32
    }
    %5 = bufferization.to_tensor %alloc_12 : memref<1x5xf32> to tensor<1x5xf32>
    return %5 : tensor<1x5xf32>
  }
}

