// What README.md's upstream route makes of tests/test_readme.py's m.onnx (IREE 3.13), for its fast run
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
module {
  func.func @m(%arg0: tensor<1x3x224x224xf32>, %arg1: tensor<1x3x1x1xf32>) -> tensor<1x1x224x224xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x1x224x224xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x1x224x224xf32>) -> tensor<1x1x224x224xf32>
    %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<1x3x224x224xf32>, tensor<1x3x1x1xf32>) outs(%1 : tensor<1x1x224x224xf32>) -> tensor<1x1x224x224xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x1x224x224xf32>) outs(%0 : tensor<1x1x224x224xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = arith.cmpf ugt, %in, %cst : f32
      %5 = arith.select %4, %in, %cst : f32
      linalg.yield %5 : f32
    } -> tensor<1x1x224x224xf32>
    return %3 : tensor<1x1x224x224xf32>
  }
}

