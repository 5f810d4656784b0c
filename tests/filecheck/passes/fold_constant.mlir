// RUN: xrelay-opt %s -p fold-constant --split-input-file | filecheck %s

// A chain of constant ops folds in one walk; the constants it leaves unused go away.
func.func @chain(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %a = nn.constant dense<[[1.0, 4.0]]> : tensor<1x2xf32>
  %b = nn.sqrt(%a) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %c = nn.negative(%b) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %d = nn.add(%x, %c) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %d : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @chain(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
// CHECK-NEXT:    %c = nn.constant dense<[[-1.000000e+00, -2.000000e+00]]> : tensor<1x2xf32>
// CHECK-NEXT:    %d = nn.add(%x, %c) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    func.return %d : tensor<1x2xf32>
// CHECK-NEXT:  }

// -----

// A weight layout_transform folds: OIHW -> HWIO of a 2x1x1x2 weight, w'[h,w,i,o] = w[o,i,h,w].
func.func @weight() -> tensor<1x2x1x2xf32> {
  %w = nn.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %t = nn.layout_transform(%w) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x1x1x2xf32>) -> tensor<1x2x1x2xf32>
  func.return %t : tensor<1x2x1x2xf32>
}

// CHECK-LABEL: func.func @weight() -> tensor<1x2x1x2xf32> {
// CHECK-NEXT:    %t = nn.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00]], {{\[\[}}2.000000e+00, 4.000000e+00]]]]> : tensor<1x2x1x2xf32>
// CHECK-NEXT:    func.return %t : tensor<1x2x1x2xf32>
// CHECK-NEXT:  }

// -----

// batch_norm with constant operands folds to three constants; its mean/var results
// are the moving statistics. (x - 1) / sqrt(3 + 1) * 2 + 1 for x = 5 -> 5.
func.func @batch_norm() -> (tensor<1x1xf32>, tensor<1xf32>) {
  %x = nn.constant dense<5.0> : tensor<1x1xf32>
  %g = nn.constant dense<2.0> : tensor<1xf32>
  %b = nn.constant dense<1.0> : tensor<1xf32>
  %m = nn.constant dense<1.0> : tensor<1xf32>
  %v = nn.constant dense<3.0> : tensor<1xf32>
  %y, %mean, %var = nn.batch_norm(%x, %g, %b, %m, %v) {epsilon = 1.0 : f64} : (tensor<1x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1x1xf32>, tensor<1xf32>, tensor<1xf32>)
  func.return %y, %var : tensor<1x1xf32>, tensor<1xf32>
}

// CHECK-LABEL: func.func @batch_norm() -> (tensor<1x1xf32>, tensor<1xf32>) {
// CHECK-NEXT:    %y = nn.constant dense<5.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %var = nn.constant dense<3.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    func.return %y, %var : tensor<1x1xf32>, tensor<1xf32>
// CHECK-NEXT:  }

// -----

// Ops with a non-constant operand stay; so do constants nobody folded.
func.func @keep(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = nn.multiply(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = nn.relu(%y) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %z : tensor<2xf32>
}

// CHECK-LABEL: func.func @keep(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    %c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %y = nn.multiply(%x, %c)
// CHECK-NEXT:    %z = nn.relu(%y)
// CHECK-NEXT:    func.return %z

// -----

// sigmoid folds through its kernel: sigmoid(-20, 0, 100) = (1 / (1 + e^20) = 2.0611536e-09, 1/2, 1),
// with no overflow on the way.
func.func @sigmoid() -> tensor<3xf32> {
  %a = nn.constant dense<[-20.0, 0.0, 100.0]> : tensor<3xf32>
  %s = nn.sigmoid(%a) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}

// CHECK-LABEL: func.func @sigmoid() -> tensor<3xf32> {
// CHECK-NEXT:    %s = nn.constant dense<[2.06115369e-09, 5.000000e-01, 1.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    func.return %s : tensor<3xf32>
// CHECK-NEXT:  }
