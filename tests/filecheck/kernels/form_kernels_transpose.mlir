// RUN: xrelay-opt %s -p form-kernels | filecheck %s
// RUN: xrelay-opt %s -p form-kernels | xrelay-opt | filecheck %s

// A channel shuffle (expand, transpose, collapse) read only by a constant pad whose interior is a view of
// the transpose's result: one "transpose" kernel of the transpose's empty, the transpose, the collapse
// and the pad, placed at the pad, with the unrelated op between them left where it was. The second
// shuffle is also returned: no kernel, its ops as they were.
func.func @main(%x: tensor<1x4x5x6xf32>, %y: tensor<4xf32>) -> (tensor<1x6x8x6xf32>, tensor<4xf32>, tensor<1x4x5x3x2xf32>) {
  %g = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 4, 5, 2, 3] : tensor<1x4x5x6xf32> into tensor<1x4x5x2x3xf32>
  %e = tensor.empty() : tensor<1x4x5x3x2xf32>
  %t = linalg.transpose ins(%g : tensor<1x4x5x2x3xf32>) outs(%e : tensor<1x4x5x3x2xf32>) permutation = [0, 1, 2, 4, 3]
  %q = arith.addf %y, %y : tensor<4xf32>
  %s = tensor.collapse_shape %t [[0], [1], [2], [3, 4]] : tensor<1x4x5x3x2xf32> into tensor<1x4x5x6xf32>
  %p = tensor.pad %s low[0, 1, 2, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %c = arith.constant -1.5 : f32
    tensor.yield %c : f32
  } : tensor<1x4x5x6xf32> to tensor<1x6x8x6xf32>
  %e2 = tensor.empty() : tensor<1x4x5x3x2xf32>
  %t2 = linalg.transpose ins(%g : tensor<1x4x5x2x3xf32>) outs(%e2 : tensor<1x4x5x3x2xf32>) permutation = [0, 1, 2, 4, 3]
  %s2 = tensor.collapse_shape %t2 [[0], [1], [2], [3, 4]] : tensor<1x4x5x3x2xf32> into tensor<1x4x5x6xf32>
  %p2 = tensor.pad %s2 low[0, 1, 2, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %c = arith.constant -1.5 : f32
    tensor.yield %c : f32
  } : tensor<1x4x5x6xf32> to tensor<1x6x8x6xf32>
  func.return %p, %q, %t2 : tensor<1x6x8x6xf32>, tensor<4xf32>, tensor<1x4x5x3x2xf32>
}

// The interior of this pad (padded along axis 2) is no view of the transpose's 1x20x6 result (its rows
// 4 x 5 are not one run of 20): no kernel.
func.func @not_a_view(%x: tensor<1x6x20xf32>) -> tensor<1x4x7x6xf32> {
  %e = tensor.empty() : tensor<1x20x6xf32>
  %t = linalg.transpose ins(%x : tensor<1x6x20xf32>) outs(%e : tensor<1x20x6xf32>) permutation = [0, 2, 1]
  %s = tensor.expand_shape %t [[0], [1, 2], [3]] output_shape [1, 4, 5, 6] : tensor<1x20x6xf32> into tensor<1x4x5x6xf32>
  %p = tensor.pad %s low[0, 0, 1, 0] high[0, 0, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %c = arith.constant 0.0 : f32
    tensor.yield %c : f32
  } : tensor<1x4x5x6xf32> to tensor<1x4x7x6xf32>
  func.return %p : tensor<1x4x7x6xf32>
}

// CHECK:      func.func @main(
// CHECK-NEXT:   %g = tensor.expand_shape %x
// CHECK-NEXT:   %q = arith.addf %y, %y : tensor<4xf32>
// CHECK-NEXT:   %p = kernel.dispatch {root = "transpose"} -> (tensor<1x6x8x6xf32>) {
// CHECK-NEXT:     %e = tensor.empty() : tensor<1x4x5x3x2xf32>
// CHECK-NEXT:     %t = linalg.transpose ins(%g:tensor<1x4x5x2x3xf32>) outs(%e:tensor<1x4x5x3x2xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK-NEXT:     %s = tensor.collapse_shape %t
// CHECK-NEXT:     %p_1 = tensor.pad %s low[0, 1, 2, 0] high[0, 1, 1, 0] {
// CHECK:          kernel.yield %p_1 : tensor<1x6x8x6xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %e2 = tensor.empty() : tensor<1x4x5x3x2xf32>
// CHECK-NEXT:   %t2 = linalg.transpose
// CHECK-NEXT:   %s2 = tensor.collapse_shape %t2
// CHECK-NEXT:   %p2 = tensor.pad %s2
// CHECK:        func.return %p, %q, %t2

// CHECK:      func.func @not_a_view(
// CHECK-NOT:  kernel.dispatch
// CHECK:        func.return %p : tensor<1x4x7x6xf32>
