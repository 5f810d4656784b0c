// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,split-kernels{threads=2}' | filecheck %s
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,split-kernels{threads=2 min_rows=3}' | filecheck %s --check-prefix=THREE
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,split-kernels{threads=2 long_op_points=1000000}' | filecheck %s --check-prefix=THREE

// An elementwise kernel (a ReLU and an add) over a channels-first image of 3 channels (98,304 loop points,
// at least `min_points`: two parts) is cut along
// its rows (axis 2): 3 channels are fewer than `min_rows` (4). With `min_rows` at 3, or when the op
// has fewer than `long_op_points` points, the first loop that can be cut (the channels, axis 1).
func.func @main(%data: tensor<1x3x128x256xf32>) -> tensor<1x3x128x256xf32> {
  %r = nn.relu(%data) : (tensor<1x3x128x256xf32>) -> tensor<1x3x128x256xf32>
  %s = nn.add(%r, %data) : (tensor<1x3x128x256xf32>, tensor<1x3x128x256xf32>) -> tensor<1x3x128x256xf32>
  func.return %s : tensor<1x3x128x256xf32>
}

// CHECK:      kernel.dispatch {{.*}}split = array<i64: 2, 2>
// THREE:      kernel.dispatch {{.*}}split = array<i64: 1, 2>
