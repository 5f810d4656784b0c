// xrelay's lowered text is upstream MLIR: IREE's iree-opt (an upstream-MLIR opt with upstream's
// verifiers) parses and verifies every nn op kind (Inputs/every_op.mlir: each case of the per-op
// tests, 38 op kinds) at the linalg, memref and loops levels, and prints it back.
// RUN: xrelay-opt %S/Inputs/every_op.mlir -p convert-nn-to-linalg | iree-opt | filecheck %s --check-prefix=LINALG
// RUN: xrelay-opt %S/Inputs/every_op.mlir -p convert-nn-to-linalg,linalg-bufferize | iree-opt | filecheck %s --check-prefix=MEMREF
// RUN: xrelay-opt %S/Inputs/every_op.mlir -p convert-nn-to-linalg,linalg-bufferize,linalg-to-loops | iree-opt | filecheck %s --check-prefix=LOOPS

// LINALG:     func.func @main(
// LINALG:       tensor.pad
// LINALG:       linalg.conv_2d_nchw_fchw
// LINALG:       linalg.generic
// LINALG:       linalg.transpose
// LINALG:       return
// LINALG-NOT: nn.

// MEMREF:     func.func @main({{.*}}memref<
// MEMREF:       memref.subview
// MEMREF:       memref.dealloc
// MEMREF:       return
// MEMREF-NOT: tensor<

// LOOPS:      func.func @main(
// LOOPS:        scf.for
// LOOPS:        memref.load
// LOOPS:        memref.store
// LOOPS:        return
// LOOPS-NOT:  linalg.
