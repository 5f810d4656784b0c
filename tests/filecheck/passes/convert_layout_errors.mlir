// RUN: not xrelay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=NHWX"}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// RUN: not xrelay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:OIHWX"}' 2>&1 | filecheck %s --check-prefix=KERNEL
// RUN: not xrelay-opt %s -p 'convert-layout{desired-layouts="conv2d"}' 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not xrelay-opt %s -p 'convert-layout{desired-layouts="nn.dense=NC"}' 2>&1 | filecheck %s --check-prefix=OP
// RUN: not xrelay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=NWHC:default"}' 2>&1 | filecheck %s --check-prefix=DEFAULT
// RUN: not xrelay-opt %s -p 'convert-layout' 2>&1 | filecheck %s --check-prefix=NONE

// Bad desired layouts are one diagnostic naming the pass and the entry, before any IR is touched.
func.func @f(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  func.return %x : tensor<1x2x4x4xf32>
}

// LAYOUT: error: invalid options for pass 'convert-layout': convert-layout desired-layouts for 'nn.conv2d': unknown nn.conv2d data layout 'NHWX' (a permutation of NCHW, e.g. NHWC)
// KERNEL: error: invalid options for pass 'convert-layout': convert-layout desired-layouts for 'nn.conv2d': unknown nn.conv2d kernel layout 'OIHWX' (a permutation of OIHW, or 'default')
// MALFORMED: error: invalid options for pass 'convert-layout': convert-layout desired-layouts: malformed entry 'conv2d', expected 'op=data_layout[:kernel_layout]'
// OP: error: invalid options for pass 'convert-layout': convert-layout desired-layouts: op 'nn.dense' has no desired-layout support (supported: nn.conv2d)
// DEFAULT: error: invalid options for pass 'convert-layout': convert-layout desired-layouts for 'nn.conv2d': no default kernel layout for data layout 'NWHC'; give one (a permutation of OIHW)
// NONE: error: invalid options for pass 'convert-layout': convert-layout desired-layouts: no desired layouts given, e.g. nn.conv2d=NHWC:HWIO
