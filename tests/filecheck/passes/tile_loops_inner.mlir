// RUN: xrelay-opt %s -p 'tile-loops{tile=8 inner_tile=128}' | filecheck %s

// inner_tile sets the innermost output loop's tile apart from the other's: i (40) becomes tiles of 8
// (no min: 8 divides 40), j (70, shorter than its tile of 128) stays whole, and both run below the
// reduction loop k: for each tile of i, the points of i and all of j walk out[i, j] once per k.
func.func @matmul(%a: memref<40x24xf32>, %b: memref<24x70xf32>, %c: memref<40x70xf32>) {
  %c40 = arith.constant 40 : index
  %c70 = arith.constant 70 : index
  %c24 = arith.constant 24 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c40 step %c1 {
    scf.for %j = %c0 to %c70 step %c1 {
      scf.for %k = %c0 to %c24 step %c1 {
        %x = memref.load %a[%i, %k] : memref<40x24xf32>
        %y = memref.load %b[%k, %j] : memref<24x70xf32>
        %acc = memref.load %c[%i, %j] : memref<40x70xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %acc : f32
        memref.store %s, %c[%i, %j] : memref<40x70xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @matmul(%a: memref<40x24xf32>, %b: memref<24x70xf32>, %c: memref<40x70xf32>) {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N70:.*]] = arith.constant 70 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[N40:.*]] = arith.constant 40 : index
// CHECK-NEXT:    %[[TILE:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[N24:.*]] = arith.constant 24 : index
// CHECK-NEXT:    scf.for %[[I0:.*]] = %[[ZERO]] to %[[N40]] step %[[TILE]] {
// CHECK-NEXT:      %[[IEND:.*]] = arith.addi %[[I0]], %[[TILE]] : index
// CHECK-NEXT:      scf.for %[[K:.*]] = %[[ZERO]] to %[[N24]] step %[[ONE]] {
// CHECK-NEXT:        scf.for %[[I:.*]] = %[[I0]] to %[[IEND]] step %[[ONE]] {
// CHECK-NEXT:          scf.for %[[J:.*]] = %[[ZERO]] to %[[N70]] step %[[ONE]] {
// CHECK-NEXT:            %x = memref.load %a[%[[I]], %[[K]]] : memref<40x24xf32>
// CHECK-NEXT:            %y = memref.load %b[%[[K]], %[[J]]] : memref<24x70xf32>
// CHECK-NEXT:            %acc = memref.load %c[%[[I]], %[[J]]] : memref<40x70xf32>
// CHECK-NEXT:            %p = arith.mulf %x, %y : f32
// CHECK-NEXT:            %s = arith.addf %p, %acc : f32
// CHECK-NEXT:            memref.store %s, %c[%[[I]], %[[J]]] : memref<40x70xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
