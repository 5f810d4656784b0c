// RUN: xdsl-opt %s | filecheck %s

// The stock xdsl-opt finds the nn dialect through the `xdsl.universe` entry point.

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}

// CHECK: %0 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
