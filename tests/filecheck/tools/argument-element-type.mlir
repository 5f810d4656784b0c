// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.zeros(2, np.float32))"
// RUN: not xrelay-run %s --input x=%t.x.npy --input y=%t.x.npy 2>&1 | filecheck %s

// Below nn no op checks element types: xrelay-run checks @main's arguments, at @main, before
// reading any input (a bf16 argument has no numpy dtype to load into).
func.func @main(%x: memref<2xbf16>, %y: memref<2xbf16>) {
  "memref.copy"(%x, %y) : (memref<2xbf16>, memref<2xbf16>) -> ()
  func.return
}
// CHECK:      argument-element-type.mlir:6:1: error: 'func.func' op argument 'x' has type memref<2xbf16>, which xrelay-run cannot feed: unsupported element type bf16 (xrelay runs f16, f32, f64, i1, i8, i16, i32, i64, their si/ui forms and index)
// CHECK-NEXT: func.func @main(%x: memref<2xbf16>, %y: memref<2xbf16>) {
// CHECK-NEXT: ^
// CHECK-NOT:  {{.}}
