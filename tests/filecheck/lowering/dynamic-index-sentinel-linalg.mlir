// RUN: not xrelay-opt %s -p conv-to-matmul 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not xrelay-opt %s -p conv-to-matmul --disable-verify 2>&1 | filecheck %s --check-prefix=LOWER

// Strides equal to xDSL's dynamic-index marker on a linalg convolution: conv-to-matmul would copy
// them into a tensor.extract_slice's static strides (which then claims dynamic operands it lacks).
// Every op a lowering builds is checked for that marker (lowering/builders.py check_static_indices).
func.func @main(%x: tensor<1x5x5x8xf32>, %w: tensor<1x1x8x16xf32>) -> tensor<1x3x3x16xf32> {
  %0 = tensor.empty() : tensor<1x3x3x16xf32>
  %1 = linalg.conv_2d_nhwc_hwcf {strides = dense<-9223372036854775808> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x5x5x8xf32>, tensor<1x1x8x16xf32>) outs(%0 : tensor<1x3x3x16xf32>) -> tensor<1x3x3x16xf32>
  func.return %1 : tensor<1x3x3x16xf32>
}
// VERIFY:      dynamic-index-sentinel-linalg.mlir:9:3: error: 'linalg.conv_2d_nhwc_hwcf' op unexpected result less than 0
// VERIFY-NEXT:   %1 = linalg.conv_2d_nhwc_hwcf
// VERIFY-NEXT:   ^
// VERIFY-NOT:  {{.}}

// LOWER:      dynamic-index-sentinel-linalg.mlir:9:3: error: pass 'ConvToMatmul' failed on 'linalg.conv_2d_nhwc_hwcf': ValueError: tensor.extract_slice would get -9223372036854775808 in static_strides, xDSL's marker of a dynamic index, which a static index cannot be
// LOWER-NEXT:   %1 = linalg.conv_2d_nhwc_hwcf
// LOWER-NEXT:   ^
// LOWER-NOT:  {{.}}
