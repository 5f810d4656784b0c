// RUN: xrelay-opt %s -p linalg-bufferize | filecheck %s

// extract_slice: a subview of the source copied into a plain buffer; insert_slice: a copy into a
// subview of the destination, written in place when the destination is fresh and used only there.
func.func @slices(%a: tensor<4x5xf32>, %b: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<6x5xf32>) {
  %s = tensor.extract_slice %a[1, 0] [2, 3] [2, 2] : tensor<4x5xf32> to tensor<2x3xf32>
  %e = tensor.empty() : tensor<6x5xf32>
  %c1 = tensor.insert_slice %a into %e[0, 0] [4, 5] [1, 1] : tensor<4x5xf32> into tensor<6x5xf32>
  %c2 = tensor.insert_slice %b into %c1[4, 0] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<6x5xf32>
  func.return %s, %c2 : tensor<2x3xf32>, tensor<6x5xf32>
}
// CHECK-LABEL: func.func @slices(%a: memref<4x5xf32>, %b: memref<2x5xf32>) -> (memref<2x3xf32>, memref<6x5xf32>)
// CHECK-NEXT:    %[[V:.*]] = memref.subview %a[1, 0] [2, 3] [2, 2] : memref<4x5xf32> to memref<2x3xf32, strided<[10, 2], offset: 5>>
// CHECK-NEXT:    %[[S:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    "memref.copy"(%[[V]], %[[S]])
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() : memref<6x5xf32>
// CHECK-NEXT:    %[[TOP:.*]] = memref.subview %[[C]][0, 0] [4, 5] [1, 1] : memref<6x5xf32> to memref<4x5xf32, strided<[5, 1]>>
// CHECK-NEXT:    "memref.copy"(%a, %[[TOP]])
// CHECK-NEXT:    %[[BOTTOM:.*]] = memref.subview %[[C]][4, 0] [2, 5] [1, 1] : memref<6x5xf32> to memref<2x5xf32, strided<[5, 1], offset: 20>>
// CHECK-NEXT:    "memref.copy"(%b, %[[BOTTOM]])
// CHECK-NEXT:    func.return %[[S]], %[[C]] : memref<2x3xf32>, memref<6x5xf32>

// A gather body reads the captured tensor through its buffer: tensor.extract becomes memref.load.
func.func @gather(%data: tensor<4x5xf32>, %idx: tensor<3xi64>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<3xi64>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%i: i64, %o: f32):
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : i64 to index
    %v = tensor.extract %data[%ii, %j] : tensor<4x5xf32>
    linalg.yield %v : f32
  } -> tensor<3x5xf32>
  func.return %g : tensor<3x5xf32>
}
// CHECK-LABEL: func.func @gather(%data: memref<4x5xf32>, %idx: memref<3xi64>) -> memref<3x5xf32>
// CHECK:         linalg.generic {{.*}} ins(%idx : memref<3xi64>) outs(%{{.*}} : memref<3x5xf32>) {
// CHECK:           %[[I:.*]] = arith.index_cast
// CHECK-NEXT:      %[[V:.*]] = memref.load %data[%[[I]], %j] : memref<4x5xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK-NOT:     tensor
