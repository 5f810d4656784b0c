// RUN: xrelay-opt %S/../../data/upstream/small_cnn.mlir -p build | filecheck %s
// RUN: xrelay-opt %S/../../data/upstream/small_cnn.mlir -p build -o %t.built.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.random.default_rng(0).random((1, 3, 8, 8), dtype=np.float32))"
// RUN: xrelay-run %t.built.mlir --input %t.x.npy -o %t.built.npy
// RUN: xrelay-run %S/../../data/upstream/small_cnn.mlir --input %t.x.npy -o %t.plain.npy
// RUN: python -c "import numpy as np; a, b = np.load('%t.built.npy'), np.load('%t.plain.npy'); assert np.allclose(a, b, rtol=1e-5, atol=1e-6), abs(a - b).max()"

// Upstream's linalg (torch-mlir's ONNX path, as IREE writes it): `build` on a linalg module runs only
// the kernel passes, which read each op's kind from its iterator types and maps, not its origin.
// `canonicalize-inits` starts the convolution from a zero fill instead of the broadcast bias, which
// becomes an elementwise add after it; that add and the ReLU, which torch-mlir writes as
// select(cmpf ugt) and `select-to-minmax` makes a maximumf, join the kernel as its epilogue, and the
// max pool's pad of it as its destination. A pool takes its fill but not the next pool's pad (the
// executor writes only a convolution's or an elementwise chain's rows into a pad). With no broadcast
// left and each op's init its own, `plan-memory` places every buffer (kernel.arena_bytes).

// CHECK:      func.func @small_cnn(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x5xf32> attributes {kernel.formed, kernel.arena_bytes = {{[0-9]+}} : i64} {
// CHECK-NOT:    linalg.broadcast
// CHECK:        kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: {{[0-9]+}}, {{[0-9]+}}>} -> (tensor<1x4x10x10xf32>) {
// CHECK-NEXT:     tensor.empty() {kernel.offset
// CHECK-NEXT:     linalg.fill
// CHECK-NEXT:     linalg.conv_2d_nchw_fchw
// CHECK-NEXT:     tensor.empty()
// CHECK-NEXT:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:     ^bb0
// CHECK-NEXT:       arith.addf
// CHECK:          linalg.generic
// CHECK-NEXT:     ^bb0
// CHECK-NEXT:       arith.maximumf
// CHECK:          tensor.pad
// CHECK:          kernel.yield
// CHECK:        kernel.dispatch {root = "pool", split = array<i64: {{[0-9]+}}, {{[0-9]+}}>} -> (tensor<1x4x4x4xf32>) {
// CHECK-NEXT:     tensor.empty() {kernel.offset
// CHECK-NEXT:     linalg.fill
// CHECK-NEXT:     linalg.pooling_nchw_max
// CHECK-NEXT:     kernel.yield
// CHECK:        kernel.dispatch {root = "pool", split = array<i64: {{[0-9]+}}, {{[0-9]+}}>} -> (tensor<1x4x4x4xf32>) {
// CHECK-NEXT:     tensor.empty() {kernel.offset
// CHECK-NEXT:     linalg.fill
// CHECK-NEXT:     linalg.pooling_nchw_sum
