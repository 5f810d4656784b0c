// RUN: xrelay-opt %s -p 'unroll-jam-loops{factor=2 remainder=true}' | filecheck %s

// With remainder, a loop the factor does not divide is jammed too: i (5 iterations) steps by 2 while
// i + 1 < 5 (to 5 - 1), and the iterations after the last whole pair, from 0 + (max(5 - 0, 0) floordiv 2) * 2,
// run in a copy of the loop after it.
func.func @matmul(%a: memref<5x3xf32>, %b: memref<3x4xf32>, %c: memref<5x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c3 step %c1 {
        %x = memref.load %a[%i, %k] : memref<5x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x4xf32>
        %acc = memref.load %c[%i, %j] : memref<5x4xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %acc : f32
        memref.store %s, %c[%i, %j] : memref<5x4xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @matmul(%a: memref<5x3xf32>, %b: memref<3x4xf32>, %c: memref<5x4xf32>) {
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[FACTOR:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %c5, %c0 : index
// CHECK-NEXT:    %[[POSITIVE:.*]] = arith.maxsi %[[SPAN]], %[[ZERO]] : index
// CHECK-NEXT:    %[[GROUPS:.*]] = arith.floordivsi %[[POSITIVE]], %[[FACTOR]] : index
// CHECK-NEXT:    %[[JAMMED:.*]] = arith.muli %[[GROUPS]], %[[FACTOR]] : index
// CHECK-NEXT:    %[[REST:.*]] = arith.addi %c0, %[[JAMMED]] : index
// CHECK-NEXT:    %[[END:.*]] = arith.subi %c5, %[[ONE]] : index
// CHECK-NEXT:    %[[OFFSET:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %c0 to %[[END]] step %[[TWO]] {
// CHECK-NEXT:      scf.for %j = %c0 to %c4 step %c1 {
// CHECK-NEXT:        scf.for %k = %c0 to %c3 step %c1 {
// CHECK-NEXT:          %x = memref.load %a[%i, %k] : memref<5x3xf32>
// CHECK-NEXT:          %y = memref.load %b[%k, %j] : memref<3x4xf32>
// CHECK-NEXT:          %acc = memref.load %c[%i, %j] : memref<5x4xf32>
// CHECK-NEXT:          %p = arith.mulf %x, %y : f32
// CHECK-NEXT:          %s = arith.addf %p, %acc : f32
// CHECK-NEXT:          memref.store %s, %c[%i, %j] : memref<5x4xf32>
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addi %i, %[[OFFSET]] : index
// CHECK-NEXT:          %x_1 = memref.load %a[%[[NEXT]], %k] : memref<5x3xf32>
// CHECK-NEXT:          %y_1 = memref.load %b[%k, %j] : memref<3x4xf32>
// CHECK-NEXT:          %acc_1 = memref.load %c[%[[NEXT]], %j] : memref<5x4xf32>
// CHECK-NEXT:          %p_1 = arith.mulf %x_1, %y_1 : f32
// CHECK-NEXT:          %s_1 = arith.addf %p_1, %acc_1 : f32
// CHECK-NEXT:          memref.store %s_1, %c[%[[NEXT]], %j] : memref<5x4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i_1 = %[[REST]] to %c5 step %c1 {
// CHECK-NEXT:      scf.for %j_1 = %c0 to %c4 step %c1 {
// CHECK-NEXT:        scf.for %k_1 = %c0 to %c3 step %c1 {
// CHECK-NEXT:          %x_2 = memref.load %a[%i_1, %k_1] : memref<5x3xf32>
// CHECK-NEXT:          %y_2 = memref.load %b[%k_1, %j_1] : memref<3x4xf32>
// CHECK-NEXT:          %acc_2 = memref.load %c[%i_1, %j_1] : memref<5x4xf32>
// CHECK-NEXT:          %p_2 = arith.mulf %x_2, %y_2 : f32
// CHECK-NEXT:          %s_2 = arith.addf %p_2, %acc_2 : f32
// CHECK-NEXT:          memref.store %s_2, %c[%i_1, %j_1] : memref<5x4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
