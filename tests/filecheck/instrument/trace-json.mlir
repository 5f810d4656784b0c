// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --trace-json %t.json -o %t.mlir
// RUN: filecheck %s --input-file %t.json
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --trace-json %t.json --pass-timing -o %t.mlir 2>&1 | filecheck %s --check-prefix=TIMING
// RUN: not xrelay-opt %s -p canonicalize-ops,linalg-bufferize --opt-level 3 --trace-json %t.failed.json 2>&1 | filecheck %s --check-prefix=FAILMSG
// RUN: filecheck %s --input-file %t.failed.json --check-prefix=FAILED
// RUN: not xrelay-opt %s -p canonicalize-ops --trace-json %S/no-such-dir/t.json 2>&1 | filecheck %s --check-prefix=BADPATH

// Chrome trace: metadata, then one complete ("X") event per pass run in start order, each with the
// pass's depth, opt level, whether it changed the IR and its op-count delta.

func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = nn.bias_add(%x, %b) {axis = -1 : i64} : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// CHECK:      "traceEvents": [
// CHECK:        "name": "process_name",
// CHECK-NEXT:   "ph": "M",
// CHECK:          "name": "xrelay-opt"
// CHECK:        "name": "thread_name",
// CHECK:        "name": "sequential",
// CHECK-NEXT:   "cat": "pass",
// CHECK-NEXT:   "ph": "X",
// CHECK-NEXT:   "ts": {{[0-9.]+}},
// CHECK-NEXT:   "dur": {{[0-9.]+}},
// CHECK-NEXT:   "pid": {{[0-9]+}},
// CHECK-NEXT:   "tid": {{[0-9]+}},
// CHECK-NEXT:   "args": {
// CHECK-NEXT:    "depth": 0,
// CHECK-NEXT:    "opt_level": 0,
// CHECK-NEXT:    "changed": true,
// CHECK-NEXT:    "op_count_delta": {
// CHECK-NEXT:     "nn.add": 1,
// CHECK-NEXT:     "nn.bias_add": -1
// CHECK:        "name": "InferType",
// CHECK:          "depth": 1,
// CHECK-NEXT:     "opt_level": 0,
// CHECK-NEXT:     "changed": false,
// CHECK-NEXT:     "op_count_delta": {}
// CHECK:        "name": "CanonicalizeOps",
// CHECK:          "depth": 1,
// CHECK-NEXT:     "opt_level": 3,
// CHECK-NEXT:     "changed": true,
// CHECK-NEXT:     "op_count_delta": {
// CHECK-NEXT:      "nn.add": 1,
// CHECK-NEXT:      "nn.bias_add": -1
// CHECK:        "name": "InferType",
// CHECK:          "depth": 2,
// CHECK:        "displayTimeUnit": "ms"

// The TVM text tree is still there beside the trace.
// TIMING:      sequential: {{[0-9]+}}us [{{[0-9]+}}us] (100.00%; 100.00%)
// TIMING-NEXT: {{^}}{{\t}}InferType: {{.*}}
// TIMING-NEXT: {{^}}{{\t}}CanonicalizeOps: {{.*}}
// TIMING-NEXT: {{^}}{{\t\t}}InferType: {{.*}}

// A pass that raises still gets its event (ending at the failure), and so do the passes around it.
// FAILMSG: xrelay-opt: error: pass 'LinalgBufferize' failed on 'nn.add': BufferizationError: linalg-bufferize: cannot bufferize nn.add; lower the module to linalg first (convert-nn-to-linalg)
// FAILED:      "name": "sequential",
// FAILED:        "failed": true,
// FAILED-NEXT:   "error": "BufferizationError: linalg-bufferize: cannot bufferize nn.add; lower the module to linalg first (convert-nn-to-linalg)"
// FAILED:      "name": "CanonicalizeOps",
// FAILED:        "changed": true,
// FAILED:      "name": "LinalgBufferize",
// FAILED:        "depth": 1,
// FAILED:        "failed": true,

// BADPATH: xrelay-opt: error: cannot write output file '{{.*}}no-such-dir/t.json': directory '{{.*}}no-such-dir' does not exist
