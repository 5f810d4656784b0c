// RUN: xrelay-opt %s -p convert-nn-to-linalg,linalg-bufferize,linalg-to-loops | filecheck %s

// dense: the zero fill and the contraction (linalg.matmul with w transposed by its indexing_maps)
// become scf.for nests of loads, mulf/addf and stores.
func.func @main(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %0 = nn.dense(%x, %w) : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @main(%x: memref<2x4xf32>, %w: memref<3x4xf32>) -> memref<2x3xf32>
// CHECK-NEXT:    %[[OUT:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memref.store %[[Z]], %[[OUT]][%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK:         scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          %[[A:.*]] = memref.load %x[%[[M]], %[[K]]] : memref<2x4xf32>
// CHECK-NEXT:          %[[B:.*]] = memref.load %w[%[[N]], %[[K]]] : memref<3x4xf32>
// CHECK-NEXT:          %[[ACC:.*]] = memref.load %[[OUT]][%[[M]], %[[N]]] : memref<2x3xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[P]], %[[ACC]] : f32
// CHECK-NEXT:          memref.store %[[S]], %[[OUT]][%[[M]], %[[N]]] : memref<2x3xf32>
// CHECK-NOT:     linalg.
// CHECK:         func.return %[[OUT]] : memref<2x3xf32>

// Max pooling: window indices are affine.apply of (output index * stride + tap); the body
// reads the running maximum from the output buffer.
func.func @pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  func.return %0 : tensor<1x1x2x2xf32>
}
// CHECK-LABEL: func.func @pool
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         memref.alloc() : memref<2x2xf32>
// CHECK:         scf.for %{{.*}} = %{{.*}} to
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to
// CHECK-NEXT:        scf.for %[[OH:.*]] = %{{.*}} to
// CHECK-NEXT:      scf.for %[[OW:.*]] = %{{.*}} to
// CHECK-NEXT:        scf.for %[[KH:.*]] = %{{.*}} to
// CHECK-NEXT:          scf.for %[[KW:.*]] = %{{.*}} to
// CHECK-NEXT:            %[[H:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%[[OH]], %[[KH]])
// CHECK-NEXT:            %[[W:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%[[OW]], %[[KW]])
// CHECK-NEXT:            %[[XV:.*]] = memref.load %x[%{{.*}}, %{{.*}}, %[[H]], %[[W]]] : memref<1x1x4x4xf32>
// CHECK-NEXT:            %[[ACC:.*]] = memref.load %[[OUT:.*]][%{{.*}}, %{{.*}}, %[[OH]], %[[OW]]] : memref<1x1x2x2xf32>
// CHECK-NEXT:            %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[XV]] : f32
// CHECK-NEXT:            memref.store %[[MAX]], %[[OUT]][%{{.*}}, %{{.*}}, %[[OH]], %[[OW]]] : memref<1x1x2x2xf32>
