// RUN: xrelay-opt %s -p 'fold-constant,convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"},fold-constant' --opt-level 3 --op-count-diff -o %t.mlir 2>&1 | filecheck %s --match-full-lines

// OpCountDiff: the tutorial's RelayCallNodeDiffer, printed as pprint prints its list:
// (depth, pass, {op: count after - count before}) for every pass that changed an op count.
// ConvertLayout requires CanonicalizeOps (bias_add on axis 1 -> expand_dims + add); it then
// transforms the data, the weight, the broadcast bias (after an expand_dims to rank 4) and the
// result back to NCHW (4); the second FoldConstant folds the constant weight's transform.

func.func @main(%x: tensor<1x3x4x4xf32>, %bias: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %w = nn.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = nn.conv2d(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %y = nn.bias_add(%c, %bias) : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// CHECK:      [(1, 'CanonicalizeOps', {'nn.add': 1, 'nn.bias_add': -1, 'nn.expand_dims': 1}),
// CHECK-NEXT:  (1, 'ConvertLayout', {'nn.expand_dims': 1, 'nn.layout_transform': 4}),
// CHECK-NEXT:  (1, 'FoldConstant', {'nn.layout_transform': -1}),
// CHECK-NEXT:  (0,
// CHECK-NEXT:   'sequential',
// CHECK-NEXT:   {'nn.add': 1,
// CHECK-NEXT:    'nn.bias_add': -1,
// CHECK-NEXT:    'nn.expand_dims': 2,
// CHECK-NEXT:    'nn.layout_transform': 3})]
