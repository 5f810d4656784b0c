// RUN: xrelay-opt %s --opt-level 3 -p build --pass-timing -o %t.mlir 2> %t.timing
// RUN: filecheck %s --input-file %t.mlir
// RUN: filecheck %s --input-file %t.timing --check-prefix=TIMING
// RUN: xrelay-opt %s --opt-level 3 -p 'build,choose-conv-algorithm{winograd=false}' | filecheck %s --check-prefix=NOWINO
// RUN: env XRELAY_NATIVE=0 xrelay-opt %s --opt-level 3 -p build | filecheck %s --check-prefix=NOWINO
// RUN: not xrelay-opt %s --opt-level 3 -p 'convert-nn-to-linalg,form-kernels{test_drop_epilogue=true}' --numerical-bisect -o %t.bad.mlir 2>&1 | filecheck %s --check-prefix=WRONG
// RUN: xrelay-opt %s --opt-level 3 -p build --opt-bisect-limit 19 -o %t.skipped.mlir 2>&1 | filecheck %s --check-prefix=BISECT
// RUN: xrelay-run %t.skipped.mlir --input data=%S/Inputs/build_data.npy -o %t.skipped.npy
// RUN: xrelay-run %t.mlir --input data=%S/Inputs/build_data.npy -o %t.built.npy
// RUN: python -c "import numpy as np; a, b = np.load('%t.skipped.npy'), np.load('%t.built.npy'); assert np.allclose(a, b, rtol=1e-4, atol=1e-5), abs(a - b).max()"

// A 3x3 convolution (16 channels, 16x16: Winograd F(4x4, 3x3) would leave 16 tiles, too few; F(2x2)
// 64) with its bias and ReLU, then a 1x1 one (im2col: its data is its patch matrix) and a residual
// add. The Winograd convolution always splits (over this machine's cores); the 1x1 one's 65,536
// multiply-adds are far below `min_conv_macs`: one part. The kernel passes skipped by the bisect
// limit, the module runs op by op, to the same result. Winograd is chosen only where its compiled kernel
// runs: with XRELAY_NATIVE=0 (numpy only) both convolutions are im2col.
func.func @main(%data: tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %w1 = nn.constant dense<0.03125> : tensor<16x16x3x3xf32>
  %b1 = nn.constant dense<0.5> : tensor<16xf32>
  %w2 = nn.constant dense<-0.0625> : tensor<16x16x1x1xf32>
  %c1 = nn.conv2d(%data, %w1) {padding = array<i64: 1, 1, 1, 1>, channels = 16, kernel_size = array<i64: 3, 3>} : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %a1 = nn.bias_add(%c1, %b1) : (tensor<1x16x16x16xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %r1 = nn.relu(%a1) : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c2 = nn.conv2d(%r1, %w2) {channels = 16, kernel_size = array<i64: 1, 1>} : (tensor<1x16x16x16xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x16xf32>
  %s = nn.add(%c2, %r1) : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  func.return %s : tensor<1x16x16x16xf32>
}

// CHECK:      func.func @main(%data: tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> attributes {kernel.formed, kernel.arena_bytes = {{[0-9]+}} : i64} {
// CHECK:        kernel.dispatch {root = "conv", algorithm = "winograd-f2", split = array<i64: 1, {{[0-9]+}}>}
// CHECK:          linalg.conv_2d_nhwc_hwcf
// CHECK:          arith.addf
// CHECK:          arith.maximumf
// CHECK:        kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: 1, 1>}
// CHECK:          linalg.conv_2d_nhwc_hwcf
// CHECK:          arith.addf

// TIMING:      Build: {{.*}}
// TIMING-NEXT: 	optimize: {{.*}}
// TIMING:      	lower-to-linalg: {{.*}}
// TIMING-NEXT: 		ConvertNNToLinalg: {{.*}}
// TIMING-NEXT: 	kernels: {{.*}}
// TIMING-NEXT: 		CanonicalizeInits: {{.*}}
// TIMING-NEXT: 		ChannelsLast: {{.*}}
// TIMING-NEXT: 		MatmulWeightsKMajor: {{.*}}
// TIMING-NEXT: 		SelectToMinMax: {{.*}}
// TIMING-NEXT: 		MaxPoolBeforeMonotonic: {{.*}}
// TIMING-NEXT: 		WholeWindowAsReduction: {{.*}}
// TIMING-NEXT: 		DropUnitDims: {{.*}}
// TIMING-NEXT: 		ExpandThroughCollapseShape: {{.*}}
// TIMING-NEXT: 		SplitElementwiseBodies: {{.*}}
// TIMING-NEXT: 		FormKernels: {{.*}}
// TIMING-NEXT: 		ChooseConvAlgorithm: {{.*}}
// TIMING-NEXT: 		SplitKernels: {{.*}}
// TIMING-NEXT: 		PlanMemory: {{.*}}

// NOWINO:     kernel.dispatch {root = "conv", algorithm = "im2col"
// NOWINO:     kernel.dispatch {root = "conv", algorithm = "im2col"

// WRONG: numerical-bisect: ConvertNNToLinalg (depth 1): max abs {{.*}}
// WRONG: numerical-bisect: first drifting pass: FormKernels (depth 1): {{.*}}

// BISECT:      BISECT: running pass (18) ConvertNNToLinalg on module
// BISECT-NEXT: BISECT: running pass (19) kernels on module
// BISECT-NEXT: BISECT: NOT running pass (20) CanonicalizeInits on module
// BISECT-NEXT: BISECT: NOT running pass (21) ChannelsLast on module
// BISECT-NEXT: BISECT: NOT running pass (22) MatmulWeightsKMajor on module
// BISECT-NEXT: BISECT: NOT running pass (23) SelectToMinMax on module
// BISECT-NEXT: BISECT: NOT running pass (24) MaxPoolBeforeMonotonic on module
// BISECT-NEXT: BISECT: NOT running pass (25) WholeWindowAsReduction on module
// BISECT-NEXT: BISECT: NOT running pass (26) DropUnitDims on module
// BISECT-NEXT: BISECT: NOT running pass (27) ExpandThroughCollapseShape on module
// BISECT-NEXT: BISECT: NOT running pass (28) SplitElementwiseBodies on module
// BISECT-NEXT: BISECT: NOT running pass (29) FormKernels on module
// BISECT-NEXT: BISECT: NOT running pass (30) ChooseConvAlgorithm on module
// BISECT-NEXT: BISECT: NOT running pass (31) SplitKernels on module
// BISECT-NEXT: BISECT: NOT running pass (32) PlanMemory on module
