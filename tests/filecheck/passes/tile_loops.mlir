// RUN: xrelay-opt %s -p 'tile-loops{tile=32}' --split-input-file | filecheck %s

// A matmul's nest, out[i, j] += a[i, k] * b[k, j], as linalg-to-loops writes it: the output loops
// i (40) and j (70) become tiles of 32 (the last one partial: min(start + 32, end)), and the
// reduction loop k runs between the tiles and their points.
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
// CHECK-NEXT:    %[[TILE:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[N40:.*]] = arith.constant 40 : index
// CHECK-NEXT:    %[[N24:.*]] = arith.constant 24 : index
// CHECK-NEXT:    scf.for %[[I0:.*]] = %[[ZERO]] to %[[N40]] step %[[TILE]] {
// CHECK-NEXT:      %[[IEND:.*]] = arith.addi %[[I0]], %[[TILE]] : index
// CHECK-NEXT:      %[[ILAST:.*]] = arith.minsi %[[IEND]], %[[N40]] : index
// CHECK-NEXT:      scf.for %[[J0:.*]] = %[[ZERO]] to %[[N70]] step %[[TILE]] {
// CHECK-NEXT:        %[[JEND:.*]] = arith.addi %[[J0]], %[[TILE]] : index
// CHECK-NEXT:        %[[JLAST:.*]] = arith.minsi %[[JEND]], %[[N70]] : index
// CHECK-NEXT:        scf.for %[[K:.*]] = %[[ZERO]] to %[[N24]] step %[[ONE]] {
// CHECK-NEXT:          scf.for %[[I:.*]] = %[[I0]] to %[[ILAST]] step %[[ONE]] {
// CHECK-NEXT:            scf.for %[[J:.*]] = %[[J0]] to %[[JLAST]] step %[[ONE]] {
// CHECK-NEXT:              %x = memref.load %a[%[[I]], %[[K]]] : memref<40x24xf32>
// CHECK-NEXT:              %y = memref.load %b[%[[K]], %[[J]]] : memref<24x70xf32>
// CHECK-NEXT:              %acc = memref.load %c[%[[I]], %[[J]]] : memref<40x70xf32>
// CHECK-NEXT:              %p = arith.mulf %x, %y : f32
// CHECK-NEXT:              %s = arith.addf %p, %acc : f32
// CHECK-NEXT:              memref.store %s, %c[%[[I]], %[[J]]] : memref<40x70xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// -----

// A 2x2 max pool: the outer output loop c stays outermost; of the two inner ones, y (8, no longer
// than a tile) is one tile and x (64) tiles of 32 with no min (32 divides 64), both now inside the
// window loops.
func.func @pool(%in: memref<3x16x16xf32>, %out: memref<3x8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.for %c = %c0 to %c3 step %c1 {
    scf.for %y = %c0 to %c8 step %c1 {
      scf.for %x = %c0 to %c64 step %c1 {
        scf.for %wy = %c0 to %c2 step %c1 {
          scf.for %wx = %c0 to %c2 step %c1 {
            %iy = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%y, %wy)
            %v = memref.load %in[%c, %iy, %wx] : memref<3x16x16xf32>
            %m = memref.load %out[%c, %y, %x] : memref<3x8x64xf32>
            %r = arith.maximumf %m, %v : f32
            memref.store %r, %out[%c, %y, %x] : memref<3x8x64xf32>
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @pool(
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[X0:.*]] = %{{.*}} to %{{.*}} step %[[TILE:.*]] {
// CHECK-NEXT:        %[[XEND:.*]] = arith.addi %[[X0]], %[[TILE]] : index
// CHECK-NEXT:        scf.for %[[WY:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          scf.for %[[WX:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:            scf.for %[[Y:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:              scf.for %[[X:.*]] = %[[X0]] to %[[XEND]] step %{{.*}} {
// CHECK-NEXT:                %iy = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%[[Y]], %[[WY]])
// CHECK-NEXT:                %v = memref.load %in[%[[C]], %iy, %[[WX]]] : memref<3x16x16xf32>
// CHECK-NEXT:                %m = memref.load %out[%[[C]], %[[Y]], %[[X]]] : memref<3x8x64xf32>

// -----

// Left alone: a prefix sum (it reads an element another iteration wrote), and an elementwise nest
// (no reduction loop to move).
func.func @untouched(%x: memref<6xf32>, %out: memref<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %prev = memref.load %out[%i] : memref<7xf32>
    %v = memref.load %x[%i] : memref<6xf32>
    %s = arith.addf %prev, %v : f32
    %j = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    memref.store %s, %out[%j] : memref<7xf32>
  }
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %x[%i] : memref<6xf32>
    memref.store %v, %out[%i] : memref<7xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @untouched(%x: memref<6xf32>, %out: memref<7xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c6 = arith.constant 6 : index
// CHECK-NEXT:    scf.for %i = %c0 to %c6 step %c1 {
// CHECK-NEXT:      %prev = memref.load %out[%i] : memref<7xf32>
// CHECK:         scf.for %i_1 = %c0 to %c6 step %c1 {
// CHECK-NEXT:      %v_1 = memref.load %x[%i_1] : memref<6xf32>
// CHECK-NEXT:      memref.store %v_1, %out[%i_1] : memref<7xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
