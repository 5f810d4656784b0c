// Upstream linalg on tensors for tests/upstream_models.py:separable_concat(), made by IREE 3.13:
//   iree-import-onnx separable_concat.onnx -o separable_concat.torch.mlir
//   iree-opt --torch-onnx-to-torch-backend-pipeline --torch-backend-to-linalg-on-tensors-backend-pipeline separable_concat.torch.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> ()>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
module {
  func.func @separable_concat(%arg0: tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<[-0.282816231, 0.102130681, -0.0959644765, -0.166861981]> : tensor<4xf32>
    %cst_2 = arith.constant dense<[[[[0.138222873]], [[0.350272447]], [[-0.222383723]], [[-0.538202941]]], [[[0.0130624166]], [[-0.0263736546]], [[0.702799082]], [[3.737040e-01]]], [[[0.0969078242]], [[0.555816591]], [[-0.102761522]], [[-0.462949783]]], [[[0.292029142]], [[0.291269213]], [[-0.107414454]], [[-0.391404301]]]]> : tensor<4x4x1x1xf32>
    %cst_3 = arith.constant dense<6.000000e+00> : tensor<f32>
    %cst_4 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_5 = arith.constant dense<[[[1.02045953, -1.27783251, 0.209049419], [-0.283884794, -0.226324648, -0.107798584], [-1.00999308, -0.115966186, -0.432606548]], [[1.66149974, 0.112893306, -0.176315397], [-0.140643716, -0.334023178, -0.527575254], [-0.195400491, 0.240972698, -0.119276807]], [[0.478879362, -0.0999010652, 0.0121297827], [0.772910416, 0.272552758, -0.252614379], [-0.0914194881, 0.270262569, 9.675440e-01]], [[-0.134810165, -0.121779338, 0.501156807], [-0.443229973, -0.145860121, 0.441269487], [0.290175021, 0.0457583517, 0.335052192]]]> : tensor<4x3x3xf32>
    %cst_6 = arith.constant 3.000000e+00 : f32
    %cst_7 = arith.constant 1.000000e-03 : f32
    %cst_8 = arith.constant 1.000000e+00 : f32
    %cst_9 = arith.constant 7.500000e-01 : f32
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
    %0 = tensor.empty() : tensor<1x4x6x6xf32>
    %broadcasted = linalg.broadcast ins(%cst_1 : tensor<4xf32>) outs(%0 : tensor<1x4x6x6xf32>) dimensions = [0, 2, 3] 
    %1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %cst_5 : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>) outs(%broadcasted : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %cst_4, %cst_3 : tensor<1x4x6x6xf32>, tensor<f32>, tensor<f32>) outs(%0 : tensor<1x4x6x6xf32>) {
    ^bb0(%in: f32, %in_13: f32, %in_14: f32, %out: f32):
      %21 = arith.cmpf ult, %in, %in_13 : f32
      %22 = arith.select %21, %in_13, %in : f32
      %23 = arith.cmpf ugt, %22, %in_14 : f32
      %24 = arith.select %23, %in_14, %22 : f32
      linalg.yield %24 : f32
    } -> tensor<1x4x6x6xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %4 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%2, %cst_2 : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) outs(%3 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %padded_10 = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst_0 : f32
    } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
    %5 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %6 = tensor.empty() : tensor<3x3xf32>
    %7 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_10, %6 : tensor<1x4x8x8xf32>, tensor<3x3xf32>) outs(%5 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %concat = tensor.concat dim(1) %4, %7 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
    %8 = tensor.empty() : tensor<1x8x6x6xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat, %concat : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) outs(%8 : tensor<1x8x6x6xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %21 = arith.mulf %in, %in_13 : f32
      linalg.yield %21 : f32
    } -> tensor<1x8x6x6xf32>
    %expanded = tensor.expand_shape %9 [[0], [1, 2], [3], [4]] output_shape [1, 1, 8, 6, 6] : tensor<1x8x6x6xf32> into tensor<1x1x8x6x6xf32>
    %padded_11 = tensor.pad %expanded low[0, 0, 1, 0, 0] high[0, 0, 1, 0, 0] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index, %arg5: index):
      tensor.yield %cst : f32
    } : tensor<1x1x8x6x6xf32> to tensor<1x1x10x6x6xf32>
    %10 = tensor.empty() : tensor<3x1x1xf32>
    %11 = tensor.empty() : tensor<1x10x6x6x1xf32>
    %transposed = linalg.transpose ins(%padded_11 : tensor<1x1x10x6x6xf32>) outs(%11 : tensor<1x10x6x6x1xf32>) permutation = [0, 2, 3, 4, 1] 
    %12 = tensor.empty() : tensor<1x8x6x6x1xf32>
    %13 = linalg.fill ins(%cst : f32) outs(%12 : tensor<1x8x6x6x1xf32>) -> tensor<1x8x6x6x1xf32>
    %14 = linalg.pooling_ndhwc_sum {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%transposed, %10 : tensor<1x10x6x6x1xf32>, tensor<3x1x1xf32>) outs(%13 : tensor<1x8x6x6x1xf32>) -> tensor<1x8x6x6x1xf32>
    %15 = tensor.empty() : tensor<1x1x8x6x6xf32>
    %transposed_12 = linalg.transpose ins(%14 : tensor<1x8x6x6x1xf32>) outs(%15 : tensor<1x1x8x6x6xf32>) permutation = [0, 4, 1, 2, 3] 
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%transposed_12 : tensor<1x1x8x6x6xf32>) outs(%15 : tensor<1x1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.divf %in, %cst_6 : f32
      linalg.yield %21 : f32
    } -> tensor<1x1x8x6x6xf32>
    %collapsed = tensor.collapse_shape %16 [[0, 1], [2], [3], [4]] : tensor<1x1x8x6x6xf32> into tensor<1x8x6x6xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed : tensor<1x8x6x6xf32>) outs(%8 : tensor<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.mulf %in, %cst_7 : f32
      linalg.yield %21 : f32
    } -> tensor<1x8x6x6xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<1x8x6x6xf32>) outs(%8 : tensor<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.addf %in, %cst_8 : f32
      linalg.yield %21 : f32
    } -> tensor<1x8x6x6xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18 : tensor<1x8x6x6xf32>) outs(%8 : tensor<1x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = math.powf %in, %cst_9 : f32
      linalg.yield %21 : f32
    } -> tensor<1x8x6x6xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat, %19 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) outs(%8 : tensor<1x8x6x6xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %21 = arith.divf %in, %in_13 : f32
      linalg.yield %21 : f32
    } -> tensor<1x8x6x6xf32>
    return %20 : tensor<1x8x6x6xf32>
  }
}

