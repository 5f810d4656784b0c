// Upstream's bufferization of upstream linalg (tests/data/upstream/*.memref|edges|loops.mlir, made by
// iree-opt; tests/upstream_models.py) parses in xrelay-opt, which prints it back in upstream's syntax:
// iree-opt rereads and verifies the printed text.
// RUN: xrelay-opt %S/../../data/upstream/small_cnn.memref.mlir | iree-opt | filecheck %s --check-prefix=MEMREF
// RUN: xrelay-opt %S/../../data/upstream/avgpool_include.edges.mlir | iree-opt | filecheck %s --check-prefix=EDGES
// RUN: xrelay-opt %S/../../data/upstream/small_cnn.loops.mlir | iree-opt | filecheck %s --check-prefix=LOOPS

// MEMREF:      memref.global "private" constant @__constant_5xf32 : memref<5xf32> = dense<[{{.*}}]> alignment = 64
// MEMREF:      func.func @small_cnn(%arg0: memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x5xf32>
// MEMREF:        memref.get_global @__constant_4x3x3x3xf32 : memref<4x3x3x3xf32>
// MEMREF:        %[[PADDED:.*]] = memref.alloc() alignment = 64 : memref<1x3x10x10xf32>
// MEMREF-NEXT:   linalg.map outs(%[[PADDED]] : memref<1x3x10x10xf32>)
// MEMREF-NEXT:     (%{{.*}}: f32) {
// MEMREF-NEXT:       linalg.index 0 : index
// MEMREF:        %[[WINDOW:.*]] = memref.subview %[[PADDED]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// MEMREF-NEXT:   memref.copy %arg0, %[[WINDOW]] : memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
// MEMREF:        linalg.pooling_nchw_max
// MEMREF:        memref.cast %{{.*}} : memref<1x5xf32> to memref<1x5xf32, strided<[?, ?], offset: ?>>

// EDGES:       func.func @avgpool_include(%arg0: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
// EDGES-NEXT:    bufferization.to_buffer %arg0 : tensor<1x2x5x5xf32> to memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>>
// EDGES:         bufferization.to_tensor %{{.*}} : memref<1x2x3x3xf32> to tensor<1x2x3x3xf32>

// LOOPS:       func.func @small_cnn(
// LOOPS:         scf.for
// LOOPS:         memref.copy %arg0, %{{.*}} : memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>> to
// LOOPS:         memref.dealloc
// LOOPS-NOT:   linalg.
