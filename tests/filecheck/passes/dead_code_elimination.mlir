// RUN: xrelay-opt %s -p dead-code-elimination | filecheck %s
// RUN: xdsl-opt %s -p dead-code-elimination | filecheck %s
// (The second RUN line uses the stock xdsl-opt, which finds nn and the pass through xrelay.universe.)

// A dead chain (constant -> add -> relu, and batch_norm with no used result) goes in one sweep;
// live ops and the block argument stay.
func.func @main(%x: tensor<2xf32>, %g: tensor<2xf32>) -> tensor<2xf32> {
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %a = nn.add(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = nn.relu(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %y, %m, %v = nn.batch_norm(%x, %g, %g, %g, %g) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  %n = nn.negative(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %n : tensor<2xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<2xf32>, %g: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    %n = nn.negative(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %n : tensor<2xf32>
// CHECK-NEXT:  }
