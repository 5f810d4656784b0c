// RUN: not xrelay-opt %s -p 'canonicalize-ops,linalg-bufferize' --opt-level 3 --crash-reproducer %t.repro.mlir 2>&1 | filecheck %s --check-prefix=FAIL
// RUN: filecheck %s --input-file %t.repro.mlir --match-full-lines
// RUN: not xrelay-opt --run-reproducer %t.repro.mlir 2>&1 | filecheck %s --check-prefix=FAIL
// RUN: xrelay-opt %t.repro.mlir -p canonicalize-ops | filecheck %s --check-prefix=PARSES
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --crash-reproducer %t.none.mlir -o %t.out.mlir
// RUN: not ls %t.none.mlir
// RUN: not xrelay-opt --run-reproducer %s 2>&1 | filecheck %s --check-prefix=NOTREPRO

// Crash reproducer: linalg-bufferize rejects nn ops. The reproducer holds the IR that pass received
// (after CanonicalizeOps), the pipeline that replays the failure and the PassContext settings;
// --run-reproducer replays it and fails the same way. No reproducer is written when nothing fails.

func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = nn.bias_add(%x, %b) {axis = -1 : i64} : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// FAIL: error: pass 'LinalgBufferize' failed on 'nn.add': BufferizationError: linalg-bufferize: cannot bufferize nn.add; lower the module to linalg first (convert-nn-to-linalg)

// CHECK:      // xrelay-reproducer: failed-pass: "LinalgBufferize"
// CHECK-NEXT: // xrelay-reproducer: depth: 1
// CHECK-NEXT: // xrelay-reproducer: error: "BufferizationError: linalg-bufferize: cannot bufferize nn.add; lower the module to linalg first (convert-nn-to-linalg)"
// CHECK-NEXT: // xrelay-reproducer: pipeline: "linalg-bufferize"
// CHECK-NEXT: // xrelay-reproducer: opt-level: 3
// CHECK-NEXT: // xrelay-reproducer: required-pass: []
// CHECK-NEXT: // xrelay-reproducer: disabled-pass: []
// CHECK-NEXT: // xrelay-reproducer: config: {}
// CHECK-NEXT: // xrelay-reproducer: full-pipeline: "canonicalize-ops,linalg-bufferize"
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
// CHECK-NEXT:     %y = nn.add(%x, %b) : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:     func.return %y : tensor<1x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// The header is made of comments: the file is ordinary xrelay-opt input.
// PARSES: %y = nn.add(%x, %b)

// NOTREPRO: xrelay-opt: error: {{.*}}crash-reproducer.mlir: not an xrelay reproducer (no '// xrelay-reproducer:' lines at the top)
