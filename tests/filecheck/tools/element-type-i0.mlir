// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.zeros(2, np.int8))"
// RUN: not xrelay-run %s --input x=%t.x.npy 2>&1 | filecheck %s
// RUN: not xrelay-opt %s 2>&1 | filecheck %s

// nn tensors hold f32, f16, f64, i32 or i64 (what the kernels and every lowering level run alike):
// the verifier rejects an i0 operand at its op, before any input is read (was an internal error
// from the argument check of xrelay-run).
func.func @main(%x: tensor<2xi0>) -> tensor<2xi0> {
  %0 = nn.relu(%x) : (tensor<2xi0>) -> tensor<2xi0>
  func.return %0 : tensor<2xi0>
}
// CHECK:      element-type-i0.mlir:9:3: error: 'nn.relu' op operand 'data' has element type i0, which nn ops do not support (use f32, f16, f64, i32, i64)
// CHECK-NEXT:   %0 = nn.relu(%x) : (tensor<2xi0>) -> tensor<2xi0>
// CHECK-NEXT:   ^
// CHECK-NOT:  {{.}}
