// RUN: xrelay-opt %s --opt-level 3 -p max-pool-before-monotonic --split-input-file | filecheck %s

// Upstream's 1x1 convolution, per-channel bias and ReLU in front of a padded 3x3/2 max pool: the pad
// reads the convolution, the bias and the ReLU run on the pool's result, in their order.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_bias_relu_pool(%x: tensor<1x3x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %w = arith.constant dense<0.5> : tensor<2x3x1x1xf32>
  %bias = arith.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %e0 = tensor.empty() : tensor<1x2x6x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x6x6xf32>, tensor<2x3x1x1xf32>) outs(%z : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %e1 = tensor.empty() : tensor<1x2x6x6xf32>
  %b = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<1x2x6x6xf32>, tensor<2xf32>) outs(%e1 : tensor<1x2x6x6xf32>) {
  ^bb0(%in: f32, %in_b: f32, %out: f32):
    %s = arith.addf %in, %in_b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x6xf32>
  %e2 = tensor.empty() : tensor<1x2x6x6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<1x2x6x6xf32>) outs(%e2 : tensor<1x2x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x6xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
  %pe = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %window : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %pool : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @conv_bias_relu_pool
// CHECK:         %c = linalg.conv_2d_nchw_fchw {{.*}} ins(%x, %w : tensor<1x3x6x6xf32>, tensor<2x3x1x1xf32>) outs(%z : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT:    %p = tensor.pad %c low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK-NEXT:    ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
// CHECK-NEXT:      tensor.yield %ninf : f32
// CHECK-NEXT:    } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
// CHECK:         %pool = linalg.pooling_nchw_max {{.*}} ins(%p, %window : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pool, %bias : tensor<1x2x3x3xf32>, tensor<2xf32>) outs(%[[E1]] : tensor<1x2x3x3xf32>) {
// CHECK-NEXT:    ^bb0(%in: f32, %in_b: f32, %out: f32):
// CHECK-NEXT:      %s = arith.addf %in, %in_b : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    } -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<1x2x3x3xf32>) outs(%[[E2]] : tensor<1x2x3x3xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %m = arith.maximumf %{{.*}}, %zero : f32
// CHECK-NEXT:      linalg.yield %m : f32
// CHECK-NEXT:    } -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %r : tensor<1x2x3x3xf32>

// -----

// Channels last, as `channels-last` writes a pool (a generic with the window's shape operand), no pad:
// a scale by a per-channel constant >= 0 and a leaky ReLU (max(x, 0.1 x)) move; so does a tanh in
// front of a min pool.
#nhwc_in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2 * 2 + d4, d3 * 2 + d5, d1)>
#nhwc_window = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#nhwc_out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @scale_leaky_nhwc(%x: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %tenth = arith.constant 0.1 : f32
  %scale = arith.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %e0 = tensor.empty() : tensor<1x4x4x2xf32>
  %s = linalg.generic {indexing_maps = [#id, #last, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %scale : tensor<1x4x4x2xf32>, tensor<2xf32>) outs(%e0 : tensor<1x4x4x2xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %v = arith.mulf %k, %in : f32
    linalg.yield %v : f32
  } -> tensor<1x4x4x2xf32>
  %e1 = tensor.empty() : tensor<1x4x4x2xf32>
  %l = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x4x4x2xf32>) outs(%e1 : tensor<1x4x4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %small = arith.mulf %in, %tenth : f32
    %v = arith.maximumf %in, %small : f32
    linalg.yield %v : f32
  } -> tensor<1x4x4x2xf32>
  %pe = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pool = linalg.generic {indexing_maps = [#nhwc_in, #nhwc_window, #nhwc_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%l, %window : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %w: f32, %acc: f32):
    %v = arith.maximumf %acc, %in : f32
    linalg.yield %v : f32
  } -> tensor<1x2x2x2xf32>
  %e2 = tensor.empty() : tensor<1x4x4x2xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x2xf32>) outs(%e2 : tensor<1x4x4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<1x4x4x2xf32>
  %me = tensor.empty() : tensor<1x2x2x2xf32>
  %minit = linalg.fill ins(%pinf : f32) outs(%me : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %minpool = linalg.generic {indexing_maps = [#nhwc_in, #nhwc_window, #nhwc_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%t, %window : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%minit : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %w: f32, %acc: f32):
    %v = arith.minimumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<1x2x2x2xf32>
  func.return %pool, %minpool : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @scale_leaky_nhwc
// CHECK-NOT:     %e0 =
// CHECK-NOT:     %e1 =
// CHECK:         %pool = linalg.generic {{.*}} ins(%x, %window : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) {
// CHECK:         } -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %[[E0:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK-NEXT:    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%pool, %scale : tensor<1x2x2x2xf32>, tensor<2xf32>) outs(%[[E0]] : tensor<1x2x2x2xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %k: f32, %out: f32):
// CHECK-NEXT:      %[[V:.*]] = arith.mulf %k, %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK-NEXT:    } -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK-NEXT:    %l = linalg.generic {{.*}} ins(%s : tensor<1x2x2x2xf32>) outs(%[[E1]] : tensor<1x2x2x2xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %small = arith.mulf %[[IN]], %tenth : f32
// CHECK-NEXT:      %[[V:.*]] = arith.maximumf %[[IN]], %small : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK-NEXT:    } -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %me = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK:         %minpool = linalg.generic {{.*}} ins(%x, %window : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%minit : tensor<1x2x2x2xf32>) {
// CHECK:         } -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK-NEXT:    %t = linalg.generic {{.*}} ins(%minpool : tensor<1x2x2x2xf32>) outs(%[[E2]] : tensor<1x2x2x2xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = math.tanh %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK-NEXT:    } -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %l, %t : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>

// -----

// Left alone: an add varying across the window (a bias along W), a scale by a negative constant, a
// square, a pad by 0 (not -inf), a window of padding only (low 2, window 2), a ReLU also returned, a sum
// pool, a body reading a loop index.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @stays(%x: tensor<1x2x4x4xf32>, %v: tensor<4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %neg = arith.constant dense<[-0.5, 1.0]> : tensor<2xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %along_w = linalg.generic {indexing_maps = [#id, #w, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %v : tensor<1x2x4x4xf32>, tensor<4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p0 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%along_w, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %negated = linalg.generic {indexing_maps = [#id, #c, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %neg : tensor<1x2x4x4xf32>, tensor<2xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %s = arith.mulf %in, %k : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p1 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%negated, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %square = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p2 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%square, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %relu0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %zero_pad = tensor.pad %relu0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  %p3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%zero_pad, %window : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %relu1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %far_pad = tensor.pad %relu1 low[0, 0, 2, 0] high[0, 0, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x4xf32>
  %p4 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%far_pad, %window : tensor<1x2x6x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %relu2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p5 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%relu2, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %relu3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p6 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%relu3, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%sum_init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %indexed = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p7 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%indexed, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %p0, %p1, %p2, %p3, %p4, %p5, %relu2, %p6, %p7 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @stays
// CHECK:         %p0 = linalg.pooling_nchw_max {{.*}} ins(%along_w, %window
// CHECK:         %p1 = linalg.pooling_nchw_max {{.*}} ins(%negated, %window
// CHECK:         %p2 = linalg.pooling_nchw_max {{.*}} ins(%square, %window
// CHECK:         %zero_pad = tensor.pad %relu0
// CHECK:         %p3 = linalg.pooling_nchw_max {{.*}} ins(%zero_pad, %window
// CHECK:         %far_pad = tensor.pad %relu1
// CHECK:         %p4 = linalg.pooling_nchw_max {{.*}} ins(%far_pad, %window
// CHECK:         %p5 = linalg.pooling_nchw_max {{.*}} ins(%relu2, %window
// CHECK:         %p6 = linalg.pooling_nchw_sum {{.*}} ins(%relu3, %window
// CHECK:         %p7 = linalg.pooling_nchw_max {{.*}} ins(%indexed, %window
// CHECK-NEXT:    func.return %p0, %p1, %p2, %p3, %p4, %p5, %relu2, %p6, %p7 :
