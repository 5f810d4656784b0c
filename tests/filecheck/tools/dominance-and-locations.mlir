// A value used before the op defining it is rejected (MLIR's dominance rule), located at the use even
// after a function holding a region (locations used to drift by the lines of every earlier region).

// RUN: not xrelay-opt %s 2>&1 | filecheck %s
// RUN: not xrelay-run %s --level loops 2>&1 | filecheck %s

func.func @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = nn.relu(%0) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %late = nn.relu(%early) : (tensor<2xf32>) -> tensor<2xf32>
  %early = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %late : tensor<2xf32>
}

// CHECK:      dominance-and-locations.mlir:14:3: error: 'nn.relu' op operand #0 (%early) does not dominate this use
// CHECK-NEXT:   %late = nn.relu(%early) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:   ^
// CHECK-NOT:  {{.}}
