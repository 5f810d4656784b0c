// RUN: xrelay-opt %s -p convert-nn-to-linalg,linalg-bufferize | filecheck %s

// Tensor constants become private constant globals; every tensor.empty an explicit alloc the
// linalg op writes in place; a reshape is a memref view; returning a global returns a copy.
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>) {
  %c = nn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = nn.add(%x, %c) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.relu(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = nn.reshape(%1) {newshape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %1, %2, %c : tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>
}
// CHECK:       "memref.global"() <{sym_name = "__constant_0", type = memref<2x3xf32>, initial_value = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>, sym_visibility = "private", constant}> : () -> ()
// CHECK-LABEL: func.func @main(%x: memref<2x3xf32>) -> (memref<2x3xf32>, memref<6xf32>, memref<2x3xf32>)
// CHECK-NEXT:    %[[C:.*]] = memref.get_global @__constant_0 : memref<2x3xf32>
// CHECK-NEXT:    %[[SUM:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%x, %[[C]] : memref<2x3xf32>, memref<2x3xf32>) outs(%[[SUM]] : memref<2x3xf32>) {
// CHECK:         %[[RELU:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[SUM]] : memref<2x3xf32>) outs(%[[RELU]] : memref<2x3xf32>) {
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[RELU]] {{\[\[}}0 : i64, 1 : i64]] : memref<2x3xf32> into memref<6xf32>
// CHECK-NEXT:    %[[COPY:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT:    "memref.copy"(%[[C]], %[[COPY]])
// CHECK-NEXT:    func.return %[[RELU]], %[[FLAT]], %[[COPY]] : memref<2x3xf32>, memref<6xf32>, memref<2x3xf32>
// CHECK-NOT:     tensor

// An init that is used again after the op cannot be written in place: it is copied first.
func.func @reused_init(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %a, %f : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @reused_init(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.fill ins(%z : f32) outs(%[[E]] : memref<4xf32>)
// CHECK-NEXT:    %[[OUT:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    "memref.copy"(%[[E]], %[[OUT]])
// CHECK-NEXT:    linalg.generic {{.*}} ins(%x : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>) {
// CHECK:         func.return %[[OUT]], %[[E]] : memref<4xf32>, memref<4xf32>

// tensor.pad: a new buffer filled with the pad value and the source copied into its interior
// subview (upstream's bufferization of tensor.pad); the pad value may be defined outside the body.
func.func @pad(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %v = arith.constant 7.0 : f32
  %p = tensor.pad %x low[1, 2] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x3xf32> to tensor<3x6xf32>
  func.return %p : tensor<3x6xf32>
}
// CHECK-LABEL: func.func @pad(%x: memref<2x3xf32>) -> memref<3x6xf32>
// CHECK-NEXT:    %v = arith.constant 7.000000e+00 : f32
// CHECK-NEXT:    %[[P:.*]] = memref.alloc() : memref<3x6xf32>
// CHECK-NEXT:    linalg.fill ins(%v : f32) outs(%[[P]] : memref<3x6xf32>)
// CHECK-NEXT:    %[[IN:.*]] = memref.subview %[[P]][1, 2] [2, 3] [1, 1] : memref<3x6xf32> to memref<2x3xf32, strided<[6, 1], offset: 8>>
// CHECK-NEXT:    "memref.copy"(%x, %[[IN]])
// CHECK-NEXT:    func.return %[[P]] : memref<3x6xf32>

// Deallocation: a temporary is freed right after its last reader; a buffer returned through a
// view (here a collapse_shape) is not freed.
func.func @dealloc(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x2xf32>
  %flat = tensor.collapse_shape %u [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  func.return %flat : tensor<4xf32>
}
// CHECK-LABEL: func.func @dealloc
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%x : memref<2x2xf32>) outs(%[[T]] : memref<2x2xf32>)
// CHECK:         %[[U:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[T]] : memref<2x2xf32>) outs(%[[U]] : memref<2x2xf32>)
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<2x2xf32>
// CHECK-NEXT:    %[[F:.*]] = memref.collapse_shape %[[U]]
// CHECK-NEXT:    func.return %[[F]] : memref<4xf32>
// CHECK-NOT:     memref.dealloc
