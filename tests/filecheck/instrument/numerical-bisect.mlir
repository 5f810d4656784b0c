// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32))"
// RUN: xrelay-opt %s -p 'simplify-inference,fold-constant,canonicalize-ops' --opt-level 3 --numerical-bisect --numerical-bisect-input x=%t.x.npy -o %t.mlir 2>&1 | filecheck %s --match-full-lines
// RUN: xrelay-opt %s -p 'simplify-inference,fold-constant,canonicalize-ops' --opt-level 3 --numerical-bisect --numerical-bisect-seed 7 --numerical-bisect-rtol 1e-5 --numerical-bisect-atol 1e-6 -o %t.mlir 2>&1 | filecheck %s --check-prefix=SEEDED
// RUN: not xrelay-opt %s -p canonicalize-ops --numerical-bisect --numerical-bisect-input y=%t.x.npy 2>&1 | filecheck %s --check-prefix=BADNAME
// RUN: not xrelay-opt %s -p canonicalize-ops --numerical-bisect --numerical-bisect-input x 2>&1 | filecheck %s --check-prefix=BADFLAG

// Numerical bisect: the model runs (nn-level numpy kernels) before the pipeline and after every pass
// that changed the IR; SimplifyInference's multiply/add and CanonicalizeOps' add compute what
// batch_norm and bias_add did up to float32 rounding. %b is not given: it gets seeded values.

func.func @main(%x: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {
  %g = nn.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %m = nn.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %v = nn.constant dense<[0.9, 1.7]> : tensor<2xf32>
  %bn:3 = nn.batch_norm(%x, %g, %b, %m, %v) : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %y = nn.bias_add(%bn#0, %b) {axis = -1 : i64} : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK:      numerical-bisect: SimplifyInference (depth 1): max abs {{[0-9]\.[0-9][0-9]e[-+][0-9][0-9]}}, max rel {{[0-9]\.[0-9][0-9]e[-+][0-9][0-9]}}
// CHECK:      numerical-bisect: CanonicalizeOps (depth 1): max abs {{.*}}, max rel {{.*}}
// CHECK-NEXT: numerical-bisect: sequential (depth 0): max abs {{.*}}, max rel {{.*}}
// CHECK-NEXT: numerical-bisect: no pass drifted (rtol 0.0001, atol 1e-05) in {{[0-9]+}} checked pass run(s)

// SEEDED: numerical-bisect: no pass drifted (rtol 1e-05, atol 1e-06) in {{[0-9]+}} checked pass run(s)

// BADNAME: xrelay-opt: error: numerical-bisect: the model does not run on the pipeline's input: @main has no argument(s) ['y']; its arguments are ['x', 'b']
// BADFLAG: xrelay-opt: error: --numerical-bisect-input: expected NAME=FILE.npy, got 'x'
