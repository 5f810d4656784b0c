// RUN: not xrelay-opt %s 2>&1 | filecheck %s
// RUN: not xrelay-run %s --level loops 2>&1 | filecheck %s

// xDSL 0.75 reads an f80 (or f128) float attribute but cannot print it: rejected where it is written.
func.func @main() -> f80 {
  %c = arith.constant 1.5 : f80
  func.return %c : f80
}
// CHECK:      float-attribute-f80.mlir:6:23: error: float attributes of type f80 are not supported (xDSL cannot print them)
// CHECK-NEXT:   %c = arith.constant 1.5 : f80
// CHECK-NEXT:                       ^^^^^^^^^
// CHECK-NOT:  {{.}}
