// RUN: not xrelay-opt %s --disable-verify -p convert-nn-to-linalg 2>&1 | filecheck %s

// A lowering that cannot handle an op (here past a disabled verifier, which rejects integer
// average pooling) names the op's place; the module is not dumped.
// CHECK: errors.mlir:[[# @LINE + 4]]:3: error: pass 'ConvertNNToLinalg' failed on 'nn.avg_pool2d': NotImplementedError: nn.avg_pool2d: only float element types lower to linalg, got i32
// CHECK-NEXT: %y = nn.avg_pool2d
// CHECK-NOT: builtin.module
func.func @main(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32> {
  %y = nn.avg_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32>
  func.return %y : tensor<1x1x2x2xi32>
}
