// RUN: xrelay-opt %s --opt-level 3 --split-input-file -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}' | filecheck %s

// ConvertLayout to NHWC/HWIO: weights and the first conv input get layout_transforms, the ops
// in between follow, and the function result goes back to NCHW.
// Residual: conv -> batch_norm -> relu -> conv, added to the first activation.
func.func @residual(%x: tensor<1x2x4x4xf32>, %w1: tensor<2x2x3x3xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>, %w2: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %c1 = nn.conv2d(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %bn:3 = nn.batch_norm(%c1, %g, %b, %m, %v) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = nn.relu(%bn#0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c2 = nn.conv2d(%r, %w2) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.add(%c2, %r) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %s : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @residual(%x: tensor<1x2x4x4xf32>, %w1: tensor<2x2x3x3xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>, %w2: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w1) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x3x3xf32>) -> tensor<3x3x2x2xf32>
// CHECK-NEXT:    %c1 = nn.conv2d(%0, %1) {padding = array<i64: 1, 1, 1, 1>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %bn, %bn_1, %bn_2 = nn.batch_norm(%c1, %g, %b, %m, %v) {axis = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    %r = nn.relu(%bn) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%w2) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x3x3xf32>) -> tensor<3x3x2x2xf32>
// CHECK-NEXT:    %c2 = nn.conv2d(%r, %2) {padding = array<i64: 1, 1, 1, 1>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %s = nn.add(%c2, %r) : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %3 = nn.layout_transform(%s) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %3 : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }

// -----

// Pools follow their input: only their layout attribute changes.
func.func @pools(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %c = nn.conv2d(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %p = nn.max_pool2d(%c) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %a = nn.avg_pool2d(%p) {pool_size = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x3x3xf32>
  %gp = nn.global_avg_pool2d(%a) : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  func.return %gp : tensor<1x2x1x1xf32>
}

// CHECK-LABEL: func.func @pools(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %p = nn.max_pool2d(%c) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %a = nn.avg_pool2d(%p) {pool_size = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x2x2x2xf32>) -> tensor<1x3x3x2xf32>
// CHECK-NEXT:    %gp = nn.global_avg_pool2d(%a) {layout = "NHWC"} : (tensor<1x3x3x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%gp) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x1x1x2xf32>) -> tensor<1x2x1x1xf32>
// CHECK-NEXT:    func.return %2 : tensor<1x2x1x1xf32>
// CHECK-NEXT:  }

// -----

// batch_flatten needs NCHW back; dense keeps NC, and its 1-D bias gets Relay's expand_dims.
func.func @head(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %fw: tensor<5x3xf32>, %fb: tensor<5xf32>) -> tensor<1x5xf32> {
  %c = nn.conv2d(%x, %w) : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %gp = nn.global_avg_pool2d(%c) : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
  %f = nn.batch_flatten(%gp) : (tensor<1x3x1x1xf32>) -> tensor<1x3xf32>
  %d = nn.dense(%f, %fw) {units = 5 : i64} : (tensor<1x3xf32>, tensor<5x3xf32>) -> tensor<1x5xf32>
  %y = nn.add(%d, %fb) : (tensor<1x5xf32>, tensor<5xf32>) -> tensor<1x5xf32>
  %s = nn.softmax(%y) : (tensor<1x5xf32>) -> tensor<1x5xf32>
  func.return %s : tensor<1x5xf32>
}

// CHECK-LABEL: func.func @head(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %fw: tensor<5x3xf32>, %fb: tensor<5xf32>) -> tensor<1x5xf32> {
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<3x2x1x1xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT:    %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-NEXT:    %gp = nn.global_avg_pool2d(%c) {layout = "NHWC"} : (tensor<1x4x4x3xf32>) -> tensor<1x1x1x3xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%gp) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x1x1x3xf32>) -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %f = nn.batch_flatten(%2) : (tensor<1x3x1x1xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %d = nn.dense(%f, %fw) {units = 5 : i64} : (tensor<1x3xf32>, tensor<5x3xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    %3 = nn.expand_dims(%fb) {axis = 0 : i64} : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    %y = nn.add(%d, %3) : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    %s = nn.softmax(%y) : (tensor<1x5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    func.return %s : tensor<1x5xf32>
// CHECK-NEXT:  }

// -----

// A (C,1,1) constant is expanded to NCHW and transformed like the data; a scalar stays.
func.func @channel_constant(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.conv2d(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %k = nn.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %m = nn.multiply(%c, %k) : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %h = nn.constant dense<0.5> : tensor<f32>
  %n = nn.subtract(%m, %h) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @channel_constant(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %k = nn.constant dense<[[[2.000000e+00]], [[3.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %2 = nn.expand_dims(%k) {axis = 0 : i64} : (tensor<2x1x1xf32>) -> tensor<1x2x1x1xf32>
// CHECK-NEXT:    %3 = nn.layout_transform(%2) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x1x1xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:    %m = nn.multiply(%c, %3) : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %h = nn.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %n = nn.subtract(%m, %h) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %4 = nn.layout_transform(%n) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %4 : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }

// -----

// batch_norm on the raw input stays NCHW (its input has no layout yet); softmax gets the NCHW value
// back, and so does the reshape of it; a transpose to NHWC of the converted conv is the conv's NHWC
// result itself (dropped), so the reshape of it reads that.
func.func @bn_data(%x: tensor<1x2x4x4xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %bn:3 = nn.batch_norm(%x, %g, %b, %m, %v) {scale = false} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %c = nn.conv2d(%bn#0, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.softmax(%c) {axis = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t = nn.transpose(%c) {axes = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %r = nn.reshape(%t) {newshape = array<i64: 1, -1>} : (tensor<1x4x4x2xf32>) -> tensor<1x32xf32>
  %r2 = nn.reshape(%c) {newshape = array<i64: 1, -1>} : (tensor<1x2x4x4xf32>) -> tensor<1x32xf32>
  %q = nn.add(%r, %r2) : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  func.return %s : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @bn_data(%x: tensor<1x2x4x4xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %bn, %bn_1, %bn_2 = nn.batch_norm(%x, %g, %b, %m, %v) {scale = false} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    %0 = nn.layout_transform(%bn) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%c) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %s = nn.softmax(%2) {axis = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %r = nn.reshape(%c) {newshape = array<i64: 1, -1>} : (tensor<1x4x4x2xf32>) -> tensor<1x32xf32>
// CHECK-NEXT:    %r2 = nn.reshape(%2) {newshape = array<i64: 1, -1>} : (tensor<1x2x4x4xf32>) -> tensor<1x32xf32>
// CHECK-NEXT:    %q = nn.add(%r, %r2) : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
// CHECK-NEXT:    func.return %s : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }

// -----

// Ops of other dialects are layout-sensitive: a call gets the NCHW value back.
func.func @caller(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.conv2d(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = func.call @callee(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}
func.func @callee(%y: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %r = nn.relu(%y) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @caller(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%c) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %r = func.call @callee(%2) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %r : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @callee(%y: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %r = nn.relu(%y) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %r : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }

// -----

// sigmoid is layout-agnostic: it follows the converted conv, one transform back at the end.
func.func @sigmoid(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.conv2d(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.sigmoid(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %s : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @sigmoid(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %s = nn.sigmoid(%c) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%s) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %2 : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }
