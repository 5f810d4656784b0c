// xdsl-opt's own flags keep working.

// RUN: xrelay-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: xrelay-opt %s --split-input-file -p infer-type | filecheck %s --check-prefix=SPLIT

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// GENERIC: %0 = "nn.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>


// SPLIT:     func.func @main
// SPLIT:     {{//}} -----
// SPLIT:     func.func @other

// -----

func.func @other(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.softmax(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
