// RUN: xrelay-opt %s -p plan-buffers | filecheck %s
// RUN: xrelay-opt %s -p plan-buffers --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array([1, -2, 3, 0.5], np.float32))"
// RUN: xrelay-opt %s -p plan-buffers -o %t.mlir
// RUN: xrelay-run %t.mlir --level loops --input %t.x.npy -o %t.out.npy --repeat 2
// RUN: env XRELAY_NATIVE=0 xrelay-run %t.mlir --level loops --input %t.x.npy -o %t.numpy.npy --repeat 2
// RUN: python -c "import numpy as np; x = np.load('%t.x.npy'); [np.testing.assert_array_equal(np.load(f), 8 * x * x) for f in ('%t.out.npy', '%t.numpy.npy')]"


// Left alone: an allocation inside a loop (one per iteration), one of a dynamic size, and a function
// another function calls (a recursive call would overwrite its caller's buffers).
func.func @callee(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  %s = memref.alloc() : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  memref.dealloc %d : memref<?xf32>
  func.return
}

func.func @caller(%n: index) {
  func.call @callee(%n) : (index) -> ()
  func.return
}

// CHECK-LABEL: func.func @callee(
// CHECK:         %d = memref.alloc(%n) : memref<?xf32>
// CHECK:           %t = memref.alloc() : memref<8xf32>
// CHECK-NEXT:      memref.dealloc %t : memref<8xf32>
// CHECK:         %s = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    memref.dealloc %s : memref<8xf32>
// CHECK-LABEL: func.func @caller(
// CHECK-NOT:   memref.get_global
// CHECK:         func.return

// A function of several blocks: lifetimes across branches are not followed.
func.func @branches(%c: i1) -> f32 {
  %a = memref.alloc() : memref<4xf32>
  cf.cond_br %c, ^yes, ^no
^yes:
  %one = arith.constant 1.0 : f32
  memref.dealloc %a : memref<4xf32>
  func.return %one : f32
^no:
  %two = arith.constant 2.0 : f32
  memref.dealloc %a : memref<4xf32>
  func.return %two : f32
}

// CHECK-LABEL: func.func @branches(
// CHECK-NEXT:    %a = memref.alloc() : memref<4xf32>

// An allocation of an element type xrelay does not run (bf16) keeps its own memory; the function's
// other buffers are still planned.
func.func @half() {
  %h = memref.alloc() : memref<8xbf16>
  %f = memref.alloc() : memref<8xf32>
  memref.dealloc %f : memref<8xf32>
  memref.dealloc %h : memref<8xbf16>
  func.return
}

// CHECK:       "memref.global"() <{sym_name = "__arena_half", type = memref<64xi8>, initial_value, sym_visibility = "private", alignment = 64 : i64}> : () -> ()
// CHECK-LABEL: func.func @half(
// CHECK-NEXT:    %arena = memref.get_global @__arena_half : memref<64xi8>
// CHECK-NEXT:    %h = memref.alloc() : memref<8xbf16>
// CHECK-NEXT:    %offset = arith.constant 0 : index
// CHECK-NEXT:    %f = memref.view %arena[%offset][] : memref<64xi8> to memref<8xf32>
// CHECK-NEXT:    memref.dealloc %h : memref<8xbf16>
// CHECK-NEXT:    func.return

// Three buffers in a chain and the result: %a dies when %c is allocated, so %c reuses its block
// (offset 0); %b, alive with both, gets the next multiple of 64 bytes. The returned %r keeps its own
// allocation (the caller owns it), and the deallocs of planned buffers go.
func.func @main(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%i] : memref<4xf32>
  }
  memref.dealloc %a : memref<4xf32>
  %c = memref.alloc() : memref<2x2xf32>
  %flat = memref.collapse_shape %c [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %flat[%i] : memref<4xf32>
  }
  memref.dealloc %b : memref<4xf32>
  %r = memref.alloc() : memref<4xf32>
  memref.copy %flat, %r : memref<4xf32> to memref<4xf32>
  memref.dealloc %c : memref<2x2xf32>
  func.return %r : memref<4xf32>
}

// CHECK:       "memref.global"() <{sym_name = "__arena_main", type = memref<128xi8>, initial_value, sym_visibility = "private", alignment = 64 : i64}> : () -> ()
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %arena = memref.get_global @__arena_main : memref<128xi8>
// CHECK:         %offset = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.view %arena[%offset][] : memref<128xi8> to memref<4xf32>
// CHECK:         %offset_1 = arith.constant 64 : index
// CHECK-NEXT:    %b = memref.view %arena[%offset_1][] : memref<128xi8> to memref<4xf32>
// CHECK:         %offset_2 = arith.constant 0 : index
// CHECK-NEXT:    %c = memref.view %arena[%offset_2][] : memref<128xi8> to memref<2x2xf32>
// CHECK-NEXT:    %flat = memref.collapse_shape %c {{.*}} : memref<2x2xf32> into memref<4xf32>
// CHECK:         %r = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    memref.copy %flat, %r : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    func.return %r : memref<4xf32>
// CHECK-NOT:     memref.dealloc

// STATS:      PlanBuffers
// STATS-NEXT:   (S) 192 arena-bytes         - Bytes of the arenas the planned buffers share
// STATS-NEXT:   (S)   4 num-planned-buffers - Number of allocations that became views of an arena
