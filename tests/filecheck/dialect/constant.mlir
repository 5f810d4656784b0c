// RUN: xrelay-opt %s -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// Constants with more than 16 elements print as little-endian hex; splats as one value;
// up to 16 elements as a decimal list.

func.func @main() {
  // 1.0, 2.0, ..., 17.0 as f32
  %big = nn.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0]> : tensor<17xf32>
  %zeros = nn.constant dense<0.0> : tensor<64x3x7x7xf32>
  %small = nn.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi64>
  %hex = nn.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>
  %scalar = nn.constant dense<0.5> : tensor<f16>
  func.return
}

// CHECK:      %big = nn.constant dense<"0x0000803F0000004000004040000080400000A0400000C0400000E04000000041000010410000204100003041000040410000504100006041000070410000804100008841"> : tensor<17xf32>
// CHECK-NEXT: %zeros = nn.constant dense<0.000000e+00> : tensor<64x3x7x7xf32>
// CHECK-NEXT: %small = nn.constant dense<{{\[}}[1, -2], [3, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: %hex = nn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: %scalar = nn.constant dense<5.000000e-01> : tensor<f16>
