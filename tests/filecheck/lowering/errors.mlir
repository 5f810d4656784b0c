// RUN: not xrelay-opt %s --disable-verify -p convert-nn-to-linalg 2>&1 | filecheck %s

// An op the verifier rejects (integer average pooling), past a disabled verifier, is not lowered:
// the lowering names the op's place and the verifier's reason; the module is not dumped.
// CHECK: errors.mlir:[[# @LINE + 4]]:3: error: pass 'ConvertNNToLinalg' failed on 'nn.avg_pool2d': ValueError: convert-nn-to-linalg: cannot lower nn.avg_pool2d: operand 'data' must have a float element type, got i32
// CHECK-NEXT: %y = nn.avg_pool2d
// CHECK-NOT: builtin.module
func.func @main(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32> {
  %y = nn.avg_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32>
  func.return %y : tensor<1x1x2x2xi32>
}
