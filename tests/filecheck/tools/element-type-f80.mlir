// RUN: not xrelay-opt %s -p convert-nn-to-linalg,nn-bufferize,linalg-to-loops 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not xrelay-opt %s -p convert-nn-to-linalg,nn-bufferize,linalg-to-loops --disable-verify 2>&1 | filecheck %s --check-prefix=LOWER

// f80 (and every float type numpy has no dtype for: bf16, f128, tf32, f8...) is no nn element type.
// The verifier rejects it; past a disabled verifier the lowering does (it lowers verified ops only),
// instead of building f80 constants xDSL cannot print.
func.func @main(%x: tensor<0x3xf80>, %w: tensor<4x3xf80>) -> tensor<0x4xf80> {
  %0 = nn.dense(%x, %w) : (tensor<0x3xf80>, tensor<4x3xf80>) -> tensor<0x4xf80>
  %1 = nn.softmax(%0) : (tensor<0x4xf80>) -> tensor<0x4xf80>
  func.return %1 : tensor<0x4xf80>
}
// VERIFY:      element-type-f80.mlir:8:3: error: 'nn.dense' op operand 'data' has element type f80, which nn ops do not support (use f32, f16, f64, i32, i64)
// VERIFY-NEXT:   %0 = nn.dense
// VERIFY-NEXT:   ^
// VERIFY-NOT:  {{.}}

// LOWER:      element-type-f80.mlir:8:3: error: pass 'ConvertNNToLinalg' failed on 'nn.dense': ValueError: convert-nn-to-linalg: cannot lower nn.dense: operand 'data' has element type f80, which nn ops do not support (use f32, f16, f64, i32, i64)
// LOWER-NEXT:   %0 = nn.dense
// LOWER-NEXT:   ^
// LOWER-NOT:  {{.}}
