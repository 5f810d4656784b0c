// Upstream linalg on tensors for tests/upstream_models.py:small_cnn(), made by IREE 3.13:
//   iree-import-onnx small_cnn.onnx -o small_cnn.torch.mlir
//   iree-opt --torch-onnx-to-torch-backend-pipeline --torch-backend-to-linalg-on-tensors-backend-pipeline small_cnn.torch.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (d0)>
#map4 = affine_map<(d0, d1) -> (d0, 0)>
module {
  func.func @small_cnn(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x5xf32> {
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %c4_i64 = arith.constant 4 : i64
    %c5_i64 = arith.constant 5 : i64
    %cst_1 = arith.constant dense<"0x4F7F1A3D995422BDE3BC443EB9E6003DC18E24BEFC29DE3D5E4BC83EBD78913EFE2F58BE665EC2BE4C783FBE1E204B3CF78F32BFF46C86BD365FBFBED9F360BE453227BEB755C2BDE3E7FC3D4B21A03E82F11DBD88E3D13E0A594CBEC1F7D73DE5C58A3E6C0BE73C296764BEB7938DBE069D0CBEB349873DCD139BBE798480BDDBA743BDD425263EF6E2833D4B57DA3D2DDB48BEEC441FBD57D6703E1A64E53E7964C1BEE889E83EFAB9CE3ED404703E467BA23DCADFC0BDB5F3DF3E3F8C163F955D0A3FFCFFC93E1493DB3D0699B9BEC624AFBA4AAB493E6FE4C5BE54C3F23DDB0D043E07D3553E6AE1B5BE68464BBEAA1206BE7CAEB3BE5D95053F025818BE731ECA3DF2DD9EBDB038F33EB5CECA3EE190423EC43A29BF9ABB7F3C4507523E60359A3E30D23DBE33EE0B3F75D1CABEAE384BBEA99F8F3EFD1C713CA4C8193F03A7673D698442BE9BF9E7BD9C99A7BE6E40C4BE94A9413EBD88323E20D8C63E9DD067BE34B9013F2E92B0BD41D4F13EAAF304BEC2F061BED877993D636E9E3E3CD9453DDCDF33BEE802CEBE0446D7BE976C1A3E1A05983E9CE249BDBF05A5BE6A19863E23ABC4BEF50D5BBED5C63E3E"> : tensor<4x3x3x3xf32>
    %cst_2 = arith.constant dense<[-0.22501412, 0.0386369601, -0.0581640825, 0.0109279696]> : tensor<4xf32>
    %cst_3 = arith.constant dense<[[-0.0757015273, 0.202114388, 0.694171965, -0.758369743], [1.420982, 0.726093769, 0.843732655, 1.16486394], [0.787588238, 0.84407866, 0.0755936131, -1.42677391], [-0.135045096, -0.76951462, -1.42274177, 0.258452803], [-0.568549454, -1.02980447, -1.04300106, 0.26841709]]> : tensor<5x4xf32>
    %cst_4 = arith.constant dense<[0.358671963, 1.32245743, -0.0139146689, 1.04183972, 1.40226483]> : tensor<5xf32>
    %c2_i64 = arith.constant 2 : i64
    %cst_5 = arith.constant 1.600000e+01 : f32
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
    %0 = tensor.empty() : tensor<1x4x8x8xf32>
    %broadcasted = linalg.broadcast ins(%cst_2 : tensor<4xf32>) outs(%0 : tensor<1x4x8x8xf32>) dimensions = [0, 2, 3] 
    %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %cst_1 : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%broadcasted : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<1x4x8x8xf32>) outs(%0 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.cmpf ugt, %in, %cst : f32
      %32 = arith.select %31, %in, %cst : f32
      linalg.yield %32 : f32
    } -> tensor<1x4x8x8xf32>
    %padded_6 = tensor.pad %2 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst_0 : f32
    } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
    %3 = tensor.empty() : tensor<1x4x4x4xf32>
    %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %5 = tensor.empty() : tensor<3x3xf32>
    %6 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded_6, %5 : tensor<1x4x10x10xf32>, tensor<3x3xf32>) outs(%4 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %padded_7 = tensor.pad %6 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32>
    %7 = linalg.fill ins(%cst : f32) outs(%3 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %8 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_7, %5 : tensor<1x4x6x6xf32>, tensor<3x3xf32>) outs(%7 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8 : tensor<1x4x4x4xf32>) outs(%3 : tensor<1x4x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = linalg.index 2 : index
      %32 = arith.index_cast %31 : index to i64
      %33 = arith.subi %32, %c1_i64 : i64
      %34 = arith.addi %32, %c2_i64 : i64
      %35 = arith.minsi %34, %c5_i64 : i64
      %36 = arith.minsi %35, %c4_i64 : i64
      %37 = arith.subi %c1_i64, %32 : i64
      %38 = arith.maxsi %37, %c0_i64 : i64
      %39 = arith.subi %36, %33 : i64
      %40 = arith.subi %39, %38 : i64
      %41 = arith.maxsi %40, %c0_i64 : i64
      %42 = linalg.index 3 : index
      %43 = arith.index_cast %42 : index to i64
      %44 = arith.subi %43, %c1_i64 : i64
      %45 = arith.addi %43, %c2_i64 : i64
      %46 = arith.minsi %45, %c5_i64 : i64
      %47 = arith.minsi %46, %c4_i64 : i64
      %48 = arith.subi %c1_i64, %43 : i64
      %49 = arith.maxsi %48, %c0_i64 : i64
      %50 = arith.subi %47, %44 : i64
      %51 = arith.subi %50, %49 : i64
      %52 = arith.maxsi %51, %c0_i64 : i64
      %53 = arith.muli %41, %52 : i64
      %54 = arith.sitofp %53 : i64 to f32
      %55 = arith.divf %in, %54 : f32
      linalg.yield %55 : f32
    } -> tensor<1x4x4x4xf32>
    %10 = tensor.empty() : tensor<1x4x1x1xf32>
    %11 = linalg.fill ins(%cst : f32) outs(%10 : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
    %12 = tensor.empty() : tensor<4x4xf32>
    %13 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%9, %12 : tensor<1x4x4x4xf32>, tensor<4x4xf32>) outs(%11 : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x4x1x1xf32>) outs(%10 : tensor<1x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.divf %in, %cst_5 : f32
      linalg.yield %31 : f32
    } -> tensor<1x4x1x1xf32>
    %collapsed = tensor.collapse_shape %14 [[0], [1, 2, 3]] : tensor<1x4x1x1xf32> into tensor<1x4xf32>
    %15 = tensor.empty() : tensor<4x5xf32>
    %transposed = linalg.transpose ins(%cst_3 : tensor<5x4xf32>) outs(%15 : tensor<4x5xf32>) permutation = [1, 0] 
    %16 = tensor.empty() : tensor<1x5xf32>
    %17 = linalg.fill ins(%cst : f32) outs(%16 : tensor<1x5xf32>) -> tensor<1x5xf32>
    %18 = linalg.matmul ins(%collapsed, %transposed : tensor<1x4xf32>, tensor<4x5xf32>) outs(%17 : tensor<1x5xf32>) -> tensor<1x5xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%18, %cst_4 : tensor<1x5xf32>, tensor<5xf32>) outs(%16 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %31 = arith.addf %in, %in_8 : f32
      linalg.yield %31 : f32
    } -> tensor<1x5xf32>
    %20 = tensor.empty() : tensor<1xi64>
    %21 = linalg.fill ins(%c0_i64 : i64) outs(%20 : tensor<1xi64>) -> tensor<1xi64>
    %22 = tensor.empty() : tensor<1xf32>
    %23 = linalg.fill ins(%cst_0 : f32) outs(%22 : tensor<1xf32>) -> tensor<1xf32>
    %24:2 = linalg.generic {indexing_maps = [#map1, #map3, #map3], iterator_types = ["parallel", "reduction"]} ins(%19 : tensor<1x5xf32>) outs(%23, %21 : tensor<1xf32>, tensor<1xi64>) {
    ^bb0(%in: f32, %out: f32, %out_8: i64):
      %31 = linalg.index 1 : index
      %32 = arith.index_cast %31 : index to i64
      %33 = arith.maximumf %in, %out : f32
      %34 = arith.cmpf ogt, %in, %out : f32
      %35 = arith.select %34, %32, %out_8 : i64
      linalg.yield %33, %35 : f32, i64
    } -> (tensor<1xf32>, tensor<1xi64>)
    %expanded = tensor.expand_shape %24#0 [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel"]} ins(%19, %expanded : tensor<1x5xf32>, tensor<1x1xf32>) outs(%16 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %31 = arith.subf %in, %in_8 : f32
      linalg.yield %31 : f32
    } -> tensor<1x5xf32>
    %26 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%25 : tensor<1x5xf32>) outs(%16 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = math.exp %in : f32
      linalg.yield %31 : f32
    } -> tensor<1x5xf32>
    %27 = tensor.empty() : tensor<1x1xf32>
    %28 = linalg.fill ins(%cst : f32) outs(%27 : tensor<1x1xf32>) -> tensor<1x1xf32>
    %29 = linalg.generic {indexing_maps = [#map1, #map4], iterator_types = ["parallel", "reduction"]} ins(%26 : tensor<1x5xf32>) outs(%28 : tensor<1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.addf %in, %out : f32
      linalg.yield %31 : f32
    } -> tensor<1x1xf32>
    %30 = linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel"]} ins(%26, %29 : tensor<1x5xf32>, tensor<1x1xf32>) outs(%16 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %31 = arith.divf %in, %in_8 : f32
      linalg.yield %31 : f32
    } -> tensor<1x5xf32>
    return %30 : tensor<1x5xf32>
  }
}

