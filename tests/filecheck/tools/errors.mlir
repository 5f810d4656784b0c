// Bad input: one MLIR-style diagnostic naming the place, exit status 1, no traceback.

// RUN: not xrelay-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not xrelay-opt %s -p fold-constnt 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not xrelay-opt %s -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not xrelay-opt %s -p 'infer-type{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not xrelay-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING

func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// VERIFY:      errors.mlir:10:3: error: 'nn.max_pool2d' op {{.*}}tensor<1x4x4x4xf32>{{.*}}
// VERIFY-NEXT:   %0 = nn.max_pool2d(%x)
// VERIFY-NEXT:   ^
// VERIFY-NOT:  Traceback

// UNKNOWN:      pass-pipeline:1:1: error: unknown pass 'fold-constnt' (did you mean 'fold-constant'?)
// UNKNOWN-NEXT: fold-constnt
// UNKNOWN-NEXT: ^^^^^^^^^^^^

// OPTION: pass-pipeline:1:1: error: invalid options for pass 'canonicalize': {{.*}}"bogus"{{.*}}

// SYNTAX:      pass-pipeline:1:12: error: invalid pass pipeline: {{.*}}
// SYNTAX-NEXT: infer-type{
// SYNTAX-NEXT:            ^

// MISSING: xrelay-opt: error: cannot access input file '{{.*}}does-not-exist.mlir': No such file or directory
