// RUN: xrelay-opt %s -p whole-window-as-reduction --split-input-file | filecheck %s

// Upstream's global average pool (a 3x5 window over the whole 3x5 image, NCHW named op) and a global
// max pool as `channels-last` writes it (a generic, NHWC, stride 2 that never moves): plain
// reductions over bare loops, the window's shape operand dropped, loops in the input's axis order.
func.func @global_pools(%x: tensor<1x2x3x5xf32>, %y: tensor<2x4x4x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<2x1x1x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %window = tensor.empty() : tensor<3x5xf32>
  %sum = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %window : tensor<1x2x3x5xf32>, tensor<3x5xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %me = tensor.empty() : tensor<2x1x1x3xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%me : tensor<2x1x1x3xf32>) -> tensor<2x1x1x3xf32>
  %mwindow = tensor.empty() : tensor<4x4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2 * 2 + d4, d3 * 2 + d5, d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%y, %mwindow : tensor<2x4x4x3xf32>, tensor<4x4xf32>) outs(%minit : tensor<2x1x1x3xf32>) {
  ^bb0(%in: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x1x1x3xf32>
  func.return %sum, %max : tensor<1x2x1x1xf32>, tensor<2x1x1x3xf32>
}

// CHECK-LABEL: func.func @global_pools
// CHECK:         %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x2x3x5xf32>) outs(%init : tensor<1x2x1x1xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %{{.*}} = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      linalg.yield
// CHECK-NEXT:    } -> tensor<1x2x1x1xf32>
// CHECK:         %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%y : tensor<2x4x4x3xf32>) outs(%minit : tensor<2x1x1x3xf32>) {
// CHECK-NEXT:    ^bb0(%in: f32, %acc: f32):
// CHECK-NEXT:      %m = arith.maximumf %acc, %in : f32
// CHECK-NEXT:      linalg.yield %m : f32
// CHECK-NEXT:    } -> tensor<2x1x1x3xf32>
// CHECK-NEXT:    func.return %sum, %max : tensor<1x2x1x1xf32>, tensor<2x1x1x3xf32>

// -----

// Left alone: a 1x1 output whose 2x2 window covers part of a 3x3 image, a dilated window (3x3 taps 2
// apart over a 5x5 image), and a pool of several windows.
func.func @windows_stay(%x: tensor<1x1x3x3xf32>, %z: tensor<1x1x5x5xf32>, %w: tensor<1x1x4x4xf32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %w2 = tensor.empty() : tensor<2x2xf32>
  %w3 = tensor.empty() : tensor<3x3xf32>
  %part = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w2 : tensor<1x1x3x3xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %dilated = linalg.pooling_nchw_sum {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%z, %w3 : tensor<1x1x5x5xf32>, tensor<3x3xf32>) outs(%init : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %e2 = tensor.empty() : tensor<1x1x2x2xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %several = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%w, %w2 : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init2 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  func.return %part, %dilated, %several : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x2x2xf32>
}

// CHECK-LABEL: func.func @windows_stay
// CHECK:         %part = linalg.pooling_nchw_sum {{.*}} ins(%x, %w2
// CHECK-NEXT:    %dilated = linalg.pooling_nchw_sum {{.*}} ins(%z, %w3
// CHECK:         %several = linalg.pooling_nchw_sum {{.*}} ins(%w, %w2
