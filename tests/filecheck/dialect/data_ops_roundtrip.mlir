// RUN: xrelay-opt %s -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s
// RUN: xrelay-opt %s --print-op-generic | xrelay-opt | filecheck %s

// The data-movement ops in their custom form: variadic operands (concatenate) and results (split),
// attributes equal to Relay's defaults left out.

func.func @main(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %i: tensor<2xi64>, %z: tensor<1x3x4x4xf32>) {
  %c = nn.concatenate(%x, %y) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  %s:3 = nn.split(%y) {indices_or_sections = array<i64: 1, 3>, axis = 1 : i64} : (tensor<2x5x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
  %ss = nn.strided_slice(%y) {begin = array<i64: 4>, end = array<i64: 0>, strides = array<i64: -2>, axes = array<i64: 1>} : (tensor<2x5x4xf32>) -> tensor<2x2x4xf32>
  %t = nn.take(%y, %i) {axis = 2 : i64, mode = "wrap"} : (tensor<2x5x4xf32>, tensor<2xi64>) -> tensor<2x5x2xf32>
  %p = nn.pad(%x) {pad_width = array<i64: 0, 0, 1, 1, 2, 0>, pad_mode = "reflect"} : (tensor<2x3x4xf32>) -> tensor<2x5x6xf32>
  %b = nn.broadcast_to(%x) {shape = array<i64: 3, 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<3x2x3x4xf32>
  %q = nn.squeeze(%z) : (tensor<1x3x4x4xf32>) -> tensor<3x4x4xf32>
  %m = nn.batch_matmul(%x, %y) : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %g = nn.global_max_pool2d(%z) : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
  func.return
}
// CHECK:      %c = nn.concatenate(%x, %y) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: %s, %s_1, %s_2 = nn.split(%y) {indices_or_sections = array<i64: 1, 3>, axis = 1 : i64} : (tensor<2x5x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
// CHECK-NEXT: %ss = nn.strided_slice(%y) {begin = array<i64: 4>, end = array<i64: 0>, strides = array<i64: -2>, axes = array<i64: 1>} : (tensor<2x5x4xf32>) -> tensor<2x2x4xf32>
// CHECK-NEXT: %t = nn.take(%y, %i) {axis = 2 : i64, mode = "wrap"} : (tensor<2x5x4xf32>, tensor<2xi64>) -> tensor<2x5x2xf32>
// CHECK-NEXT: %p = nn.pad(%x) {pad_width = array<i64: 0, 0, 1, 1, 2, 0>, pad_mode = "reflect"} : (tensor<2x3x4xf32>) -> tensor<2x5x6xf32>
// CHECK-NEXT: %b = nn.broadcast_to(%x) {shape = array<i64: 3, 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<3x2x3x4xf32>
// CHECK-NEXT: %q = nn.squeeze(%z) : (tensor<1x3x4x4xf32>) -> tensor<3x4x4xf32>
// CHECK-NEXT: %m = nn.batch_matmul(%x, %y) : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: %g = nn.global_max_pool2d(%z) : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
