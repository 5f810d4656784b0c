// RUN: xrelay-opt %s -p 'sink-reduction-loops{max_trips=4}' --split-input-file | filecheck %s

// A convolution after tile-loops: of its reduction loops ci, kh, kw (3 iterations each), kw alone
// fits in 4 iterations and moves below the points oh, ow; ci and kh stay where they were.
func.func @conv(%in: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %out: memref<1x4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %co = %c0 to %c4 step %c1 {
      scf.for %ci = %c0 to %c3 step %c1 {
        scf.for %kh = %c0 to %c3 step %c1 {
          scf.for %kw = %c0 to %c3 step %c1 {
            scf.for %oh = %c0 to %c4 step %c1 {
              scf.for %ow = %c0 to %c4 step %c1 {
                %ih = arith.addi %oh, %kh : index
                %iw = arith.addi %ow, %kw : index
                %x = memref.load %in[%n, %ci, %ih, %iw] : memref<1x3x6x6xf32>
                %f = memref.load %w[%co, %ci, %kh, %kw] : memref<4x3x3x3xf32>
                %acc = memref.load %out[%n, %co, %oh, %ow] : memref<1x4x4x4xf32>
                %p = arith.mulf %x, %f : f32
                %s = arith.addf %p, %acc : f32
                memref.store %s, %out[%n, %co, %oh, %ow] : memref<1x4x4x4xf32>
              }
            }
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @conv(
// CHECK:         scf.for %n = %c0 to %c1 step %c1 {
// CHECK-NEXT:      scf.for %co = %c0 to %c4 step %c1 {
// CHECK-NEXT:        scf.for %ci = %c0 to %c3 step %c1 {
// CHECK-NEXT:          scf.for %kh = %c0 to %c3 step %c1 {
// CHECK-NEXT:            scf.for %[[OH:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:              scf.for %[[OW:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:                scf.for %[[KW:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:                  %ih = arith.addi %[[OH]], %kh : index
// CHECK-NEXT:                  %iw = arith.addi %[[OW]], %[[KW]] : index
// CHECK-NEXT:                  %x = memref.load %in[%n, %ci, %ih, %iw] : memref<1x3x6x6xf32>
// CHECK-NEXT:                  %f = memref.load %w[%co, %ci, %kh, %[[KW]]] : memref<4x3x3x3xf32>
// CHECK-NEXT:                  %acc = memref.load %out[%n, %co, %[[OH]], %[[OW]]] : memref<1x4x4x4xf32>
// CHECK-NEXT:                  %p = arith.mulf %x, %f : f32
// CHECK-NEXT:                  %s = arith.addf %p, %acc : f32
// CHECK-NEXT:                  memref.store %s, %out[%n, %co, %[[OH]], %[[OW]]] : memref<1x4x4x4xf32>
// CHECK-NEXT:                }
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Left alone: a matmul as lowered (its reduction loop k, 6 iterations, is longer than 4, and already
// innermost: no points below it), and a nest that reads the output at another element than it stores.
func.func @untouched(%a: memref<4x6xf32>, %b: memref<6x5xf32>, %c: memref<4x5xf32>, %d: memref<9xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %k = %c0 to %c6 step %c1 {
      scf.for %j = %c0 to %c5 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x5xf32>
        %acc = memref.load %c[%i, %j] : memref<4x5xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %acc : f32
        memref.store %s, %c[%i, %j] : memref<4x5xf32>
      }
    }
  }
  scf.for %r = %c0 to %c2 step %c1 {
    scf.for %i = %c0 to %c8 step %c1 {
      %next = arith.addi %i, %c1 : index
      %prev = memref.load %d[%i] : memref<9xf32>
      memref.store %prev, %d[%next] : memref<9xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @untouched(
// CHECK:         scf.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %k = %c0 to %c6 step %c1 {
// CHECK-NEXT:        scf.for %j = %c0 to %c5 step %c1 {
// CHECK:         scf.for %r = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %i_1 = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %next = arith.addi %i_1, %c1 : index
// CHECK-NEXT:        %prev = memref.load %d[%i_1] : memref<9xf32>
// CHECK-NEXT:        memref.store %prev, %d[%next] : memref<9xf32>
