// RUN: not xrelay-opt %s 2>&1 | filecheck %s
// RUN: not xrelay-opt --split-input-file %s 2>&1 | filecheck %s --check-prefix=SPLIT

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu(%y) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK:      parse-error.mlir:5:16: error: use of undefined value %y
// CHECK-NEXT:   %0 = nn.relu(%y) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:                ^^

// With --split-input-file the line numbers still count from the top of the file.

// -----

func.func @second(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// SPLIT: parse-error.mlir:5:16: error: use of undefined value %y

// A type clash inside one function is a parse error too, located at the use.

