// RUN: xrelay-opt %s -p convert-nn-to-linalg,iree-conv-tiles -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: iree-opt < %t.out.mlir | filecheck %s --check-prefix=IREE
// RUN: xrelay-opt %s -p "convert-nn-to-linalg,iree-conv-tiles{max_rows=14 target_workgroups=2}" | filecheck %s --check-prefix=OPTS

// 7 output rows of 64 filters (4 blocks of 16): every row in one workgroup, one block each (at least
// one, for about 16 workgroups).
func.func @seven_rows(%x: tensor<1x7x7x32xf32>, %w: tensor<3x3x32x64xf32>) -> tensor<1x7x7x64xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO", padding = array<i64: 1, 1, 1, 1>} : (tensor<1x7x7x32xf32>, tensor<3x3x32x64xf32>) -> tensor<1x7x7x64xf32>
  func.return %0 : tensor<1x7x7x64xf32>
}
// CHECK-LABEL: func.func @seven_rows
// CHECK:         linalg.conv_2d_nhwc_hwcf {kernel.workgroup_tiles = array<i64: 1, 7>, strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
// IREE-LABEL:  func.func @seven_rows
// IREE:          linalg.conv_2d_nhwc_hwcf {{.*}}kernel.workgroup_tiles = array<i64: 1, 7>
// OPTS-LABEL:  func.func @seven_rows
// OPTS:          kernel.workgroup_tiles = array<i64: 2, 7>

// 14 output rows: IREE's own tiles, unless `max_rows` is 14.
func.func @fourteen_rows(%x: tensor<1x14x14x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<1x14x14x32xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO", padding = array<i64: 1, 1, 1, 1>} : (tensor<1x14x14x16xf32>, tensor<3x3x16x32xf32>) -> tensor<1x14x14x32xf32>
  func.return %0 : tensor<1x14x14x32xf32>
}
// CHECK-LABEL: func.func @fourteen_rows
// CHECK-NOT:     kernel.workgroup_tiles
// CHECK:         func.return
// OPTS-LABEL:  func.func @fourteen_rows
// OPTS:          kernel.workgroup_tiles = array<i64: 1, 14>

// 24 filters are not whole blocks of 16: no tiles.
func.func @partial_block(%x: tensor<1x7x7x8xf32>, %w: tensor<3x3x8x24xf32>) -> tensor<1x7x7x24xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO", padding = array<i64: 1, 1, 1, 1>} : (tensor<1x7x7x8xf32>, tensor<3x3x8x24xf32>) -> tensor<1x7x7x24xf32>
  func.return %0 : tensor<1x7x7x24xf32>
}
// CHECK-LABEL: func.func @partial_block
// CHECK-NOT:     kernel.workgroup_tiles
// CHECK:         func.return
