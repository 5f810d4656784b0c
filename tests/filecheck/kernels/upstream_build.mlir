// RUN: xrelay-opt %S/../../data/upstream/small_cnn.mlir -p build -o %t.built.mlir
// RUN: filecheck %s --input-file %t.built.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.random.default_rng(0).random((1, 3, 8, 8), dtype=np.float32))"
// RUN: xrelay-run %t.built.mlir --input %t.x.npy -o %t.built.npy
// RUN: xrelay-run %S/../../data/upstream/small_cnn.mlir --input %t.x.npy -o %t.plain.npy
// RUN: python -c "import numpy as np; a, b = np.load('%t.built.npy'), np.load('%t.plain.npy'); assert np.allclose(a, b, rtol=1e-5, atol=1e-6), abs(a - b).max()"

// Upstream's linalg (torch-mlir's ONNX path, as IREE writes it): `build` on a linalg module runs only
// the kernel passes, which read each op's kind from its iterator types and maps, not its origin.
// `canonicalize-inits` starts the convolution from a zero fill instead of the broadcast bias, which
// becomes an elementwise add after it; `channels-last` stores the images NHWC (the argument transposed
// in, the pooled features transposed back before they are flattened), the convolution and pools
// generics over the permuted maps. The bias add and the ReLU, which torch-mlir writes as
// select(cmpf ugt) and `select-to-minmax` makes a maximumf, join the convolution's kernel as its
// epilogue, and the max pool's pad of it as its destination. A pool takes its fill but not the next
// pool's pad (the executor writes only a convolution's or an elementwise chain's rows into a pad).
// The global average pool, a window over the whole image, is a plain reduction
// (`whole-window-as-reduction`).
// The convolution over three channels (a reduction of 27) is "direct".
// With no broadcast left and each op's init its own, `plan-memory` places every buffer.

// CHECK:      func.func @small_cnn(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x5xf32> attributes {kernel.formed, kernel.arena_bytes = {{[0-9]+}} : i64} {
// CHECK-NOT:    linalg.broadcast
// CHECK:        linalg.transpose ins(%arg0:tensor<1x3x8x8xf32>) outs(%{{.*}}:tensor<1x8x8x3xf32>) permutation = [0, 2, 3, 1]
// CHECK:        tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:        kernel.dispatch {root = "conv", algorithm = "direct", split = array<i64: {{[0-9]+}}, {{[0-9]+}}>} -> (tensor<1x10x10x4xf32>) {
// CHECK-NEXT:     tensor.empty() {kernel.offset
// CHECK-NEXT:     linalg.fill
// CHECK-NEXT:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d2 + d5), (d3 + d6), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3, d1)>]
// CHECK:          linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
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
// CHECK-NEXT:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d2 * 2) + d4), ((d3 * 2) + d5), d1)>
// CHECK:          arith.maximumf
// CHECK:          kernel.yield
// CHECK:        kernel.dispatch {root = "pool", split = array<i64: {{[0-9]+}}, {{[0-9]+}}>} -> (tensor<1x4x4x4xf32>) {
// CHECK-NEXT:     tensor.empty() {kernel.offset
// CHECK-NEXT:     linalg.fill
// CHECK-NEXT:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d2 + d4), (d3 + d5), d1)>
// CHECK:        kernel.dispatch {root = "reduce", split = array<i64: {{[0-9]+}}, {{[0-9]+}}>} -> (tensor<1x1x1x4xf32>) {
// CHECK-NEXT:     tensor.empty() {kernel.offset
// CHECK-NEXT:     linalg.fill
// CHECK-NEXT:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK:        linalg.transpose ins(%{{.*}}:tensor<1x1x1x4xf32>) outs(%{{.*}}:tensor<1x4x1x1xf32>) permutation = [0, 3, 1, 2]
// CHECK-NEXT:   tensor.collapse_shape
