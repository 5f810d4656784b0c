// RUN: xrelay-opt %s -p cse,dce | filecheck %s

// nn ops are Pure: upstream cse merges equal ops (equal splat constants too), dce drops unused ones.

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %1 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = nn.constant dense<1.0> : tensor<4xf32>
  %d = nn.constant dense<1.0> : tensor<4xf32>
  %2 = nn.add(%0, %1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %3 = nn.add(%2, %c) : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %4 = nn.add(%2, %d) : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %5 = nn.sqrt(%4) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %3 : tensor<1x4xf32>
}

// CHECK:      func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:   %0 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:   %c = nn.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:   %1 = nn.add(%0, %0) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:   %2 = nn.add(%1, %c) : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:   func.return %2 : tensor<1x4xf32>
