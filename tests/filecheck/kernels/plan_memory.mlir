// RUN: xrelay-opt %s -p plan-memory -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-opt < %t.mlir | filecheck %s
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(16, dtype=np.float32).reshape(4, 4) / 8 - 1)"
// RUN: xrelay-run %t.mlir --input x=%t.x.npy -o %t.out.npy
// RUN: python -c "import numpy as np; x = np.load('%t.x.npy'); q = -np.pad(np.exp(-np.exp(x)), 1); out = np.load('%t.out.npy'); assert np.allclose(out[:, 6:], q, rtol=1e-6), out"
// RUN: sed 's/kernel.offset = 64 /kernel.offset = 32 /' %t.mlir > %t.bad.mlir
// RUN: not xrelay-run %t.bad.mlir --input x=%t.x.npy 2>&1 | filecheck %s --check-prefix=OVERLAP

// Each op is one step; a buffer lives from its allocation to its last use (the result to the end),
// and blocks are taken by best fit, laid out at multiples of 64 bytes:
//   step 1  %e0  4x4xf32   64 B  block 0 (new)               live 1-4 (read by %b)
//   step 3  %e1  4x4xf32   64 B  block 1 (new: block 0 held) live 3-6
//   step 5  %e2  4x4xf32   64 B  block 0 (freed after step 4) live 5-7
//   step 7  %p   6x6xf32  144 B  block 2 (new: block 1 is 64 B) live 7-10
//   step 8  %d   6x12xf32 288 B  block 3 (new)               live 8-13, with %e3 placed in its
//   step 9  %e3  6x6xf32         slice [0:6, 6:12]: %q is computed there, the insert copies nothing
// Offsets: block 0 at 0, block 1 at 64, block 2 at 128 (144 B rounded up to 192), block 3 at 320
// (288 B rounded up to 320): an arena of 640 bytes. The executor binds each buffer to its bytes and
// refuses a placement where two live buffers overlap (%e1 moved onto %e0's last 32 bytes).
func.func @main(%x: tensor<4x4xf32>) -> tensor<6x12xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = tensor.pad %c low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  %d = tensor.empty() : tensor<6x12xf32>
  %e3 = tensor.empty() : tensor<6x6xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<6x6xf32>) outs(%e3 : tensor<6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<6x6xf32>
  %s = tensor.insert_slice %q into %d[0, 6] [6, 6] [1, 1] : tensor<6x6xf32> into tensor<6x12xf32>
  func.return %s : tensor<6x12xf32>
}

// CHECK:      func.func @main(%x: tensor<4x4xf32>) -> tensor<6x12xf32> attributes {kernel.arena_bytes = 640 : i64, kernel.formed} {
// CHECK:        %e0 = tensor.empty() {kernel.offset = 0 : i64} : tensor<4x4xf32>
// CHECK:        %e1 = tensor.empty() {kernel.offset = 64 : i64} : tensor<4x4xf32>
// CHECK:        %e2 = tensor.empty() {kernel.offset = 0 : i64} : tensor<4x4xf32>
// CHECK:        %p = tensor.pad %c low[1, 1] high[1, 1] {
// CHECK:        } {kernel.offset = 128 : i64} : tensor<4x4xf32> to tensor<6x6xf32>
// CHECK-NEXT:   %d = tensor.empty() {kernel.offset = 320 : i64} : tensor<6x12xf32>
// CHECK-NEXT:   %e3 = tensor.empty() : tensor<6x6xf32>
// CHECK:        %s = tensor.insert_slice %q into %d[0, 6] [6, 6] [1, 1] {kernel.in_place} : tensor<6x6xf32> into tensor<6x12xf32>

// OVERLAP: xrelay-run: error: execution failed: {{.*}}.bad.mlir:10:5: tensor.empty %e1: kernel.offset = 32 overlaps tensor.empty %e0 (kernel.offset = 0, 64 bytes), alive at the same time (steps 3-6 and 1-4)
