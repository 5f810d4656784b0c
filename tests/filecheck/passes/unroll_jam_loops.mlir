// RUN: xrelay-opt %s -p 'unroll-jam-loops{factor=2}' --split-input-file | filecheck %s

// A matmul's nest as linalg-to-loops writes it, out[i, j] += a[i, k] * b[k, j]: the innermost loop k
// walks b[k, j], which i does not index, so i steps by 2 and the body runs for i and i + 1.
func.func @matmul(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c5 step %c1 {
      scf.for %k = %c0 to %c3 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x5xf32>
        %acc = memref.load %c[%i, %j] : memref<4x5xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %acc : f32
        memref.store %s, %c[%i, %j] : memref<4x5xf32>
      }
    }
  }
  func.return
}


// CHECK-LABEL: func.func @matmul(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %c0 to %c4 step %[[TWO]] {
// CHECK-NEXT:      scf.for %j = %c0 to %c5 step %c1 {
// CHECK-NEXT:        scf.for %k = %c0 to %c3 step %c1 {
// CHECK-NEXT:          %x = memref.load %a[%i, %k] : memref<4x3xf32>
// CHECK-NEXT:          %y = memref.load %b[%k, %j] : memref<3x5xf32>
// CHECK-NEXT:          %acc = memref.load %c[%i, %j] : memref<4x5xf32>
// CHECK-NEXT:          %p = arith.mulf %x, %y : f32
// CHECK-NEXT:          %s = arith.addf %p, %acc : f32
// CHECK-NEXT:          memref.store %s, %c[%i, %j] : memref<4x5xf32>
// CHECK-NEXT:          %[[I1:.*]] = arith.addi %i, %[[ONE]] : index
// CHECK-NEXT:          %x_1 = memref.load %a[%[[I1]], %k] : memref<4x3xf32>
// CHECK-NEXT:          %y_1 = memref.load %b[%k, %j] : memref<3x5xf32>
// CHECK-NEXT:          %acc_1 = memref.load %c[%[[I1]], %j] : memref<4x5xf32>
// CHECK-NEXT:          %p_1 = arith.mulf %x_1, %y_1 : f32
// CHECK-NEXT:          %s_1 = arith.addf %p_1, %acc_1 : f32
// CHECK-NEXT:          memref.store %s_1, %c[%[[I1]], %j] : memref<4x5xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A convolution after tile-loops (its reduction loops ci, kh, kw outside the points oh, ow): the
// innermost loop ow walks the input, which co does not index, so co steps by 2. The point loop oh
// indexes everything ow walks, so it is not the one unrolled.
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
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %n = %c0 to %c1 step %c1 {
// CHECK-NEXT:      scf.for %co = %c0 to %c4 step %[[TWO]] {
// CHECK-NEXT:        scf.for %ci = %c0 to %c3 step %c1 {
// CHECK-NEXT:          scf.for %kh = %c0 to %c3 step %c1 {
// CHECK-NEXT:            scf.for %kw = %c0 to %c3 step %c1 {
// CHECK-NEXT:              scf.for %oh = %c0 to %c4 step %c1 {
// CHECK-NEXT:                scf.for %ow = %c0 to %c4 step %c1 {
// CHECK-NEXT:                  %ih = arith.addi %oh, %kh : index
// CHECK-NEXT:                  %iw = arith.addi %ow, %kw : index
// CHECK-NEXT:                  %x = memref.load %in[%n, %ci, %ih, %iw] : memref<1x3x6x6xf32>
// CHECK-NEXT:                  %f = memref.load %w[%co, %ci, %kh, %kw] : memref<4x3x3x3xf32>
// CHECK-NEXT:                  %acc = memref.load %out[%n, %co, %oh, %ow] : memref<1x4x4x4xf32>
// CHECK-NEXT:                  %p = arith.mulf %x, %f : f32
// CHECK-NEXT:                  %s = arith.addf %p, %acc : f32
// CHECK-NEXT:                  memref.store %s, %out[%n, %co, %oh, %ow] : memref<1x4x4x4xf32>
// CHECK-NEXT:                  %[[CO1:.*]] = arith.addi %co, %[[ONE]] : index
// CHECK-NEXT:                  %ih_1 = arith.addi %oh, %kh : index
// CHECK-NEXT:                  %iw_1 = arith.addi %ow, %kw : index
// CHECK-NEXT:                  %x_1 = memref.load %in[%n, %ci, %ih_1, %iw_1] : memref<1x3x6x6xf32>
// CHECK-NEXT:                  %f_1 = memref.load %w[%[[CO1]], %ci, %kh, %kw] : memref<4x3x3x3xf32>
// CHECK-NEXT:                  %acc_1 = memref.load %out[%n, %[[CO1]], %oh, %ow] : memref<1x4x4x4xf32>
// CHECK-NEXT:                  %p_1 = arith.mulf %x_1, %f_1 : f32
// CHECK-NEXT:                  %s_1 = arith.addf %p_1, %acc_1 : f32
// CHECK-NEXT:                  memref.store %s_1, %out[%n, %[[CO1]], %oh, %ow] : memref<1x4x4x4xf32>
// CHECK-NEXT:                }

// -----

// Left alone: the output loop's trip count (5) is not a multiple of the factor; nests that read the
// output at another element than they store, the next one (which a later iteration overwrites) or
// the one before (which an earlier iteration wrote: a prefix sum); a tiled nest whose points' bounds
// depend on the tile loop.
func.func @untouched(%a: memref<5x3xf32>, %c: memref<5xf32>, %d: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c5 step %c1 {
    scf.for %k = %c0 to %c3 step %c1 {
      %x = memref.load %a[%k, %k] : memref<5x3xf32>
      %acc = memref.load %c[%i] : memref<5xf32>
      %s = arith.addf %x, %acc : f32
      memref.store %s, %c[%i] : memref<5xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %k = %c0 to %c3 step %c1 {
      %x = memref.load %a[%k, %k] : memref<5x3xf32>
      %j = arith.addi %i, %c1 : index
      %prev = memref.load %d[%j] : memref<8xf32>
      %s = arith.addf %x, %prev : f32
      memref.store %s, %d[%i] : memref<8xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %k = %c0 to %c3 step %c1 {
      %x = memref.load %a[%k, %k] : memref<5x3xf32>
      %prev = memref.load %d[%i] : memref<8xf32>
      %s = arith.addf %x, %prev : f32
      %j = arith.addi %i, %c1 : index
      memref.store %s, %d[%j] : memref<8xf32>
    }
  }
  scf.for %t = %c0 to %c8 step %c4 {
    %end = arith.addi %t, %c4 : index
    scf.for %k = %c0 to %c3 step %c1 {
      scf.for %i = %t to %end step %c1 {
        %x = memref.load %a[%k, %k] : memref<5x3xf32>
        %acc = memref.load %d[%i] : memref<8xf32>
        %s = arith.addf %x, %acc : f32
        memref.store %s, %d[%i] : memref<8xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @untouched(
// CHECK-NOT:     arith.constant 2 : index
// CHECK:         scf.for %i = %c0 to %c5 step %c1 {
// CHECK-NEXT:      scf.for %k = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %x = memref.load %a[%k, %k] : memref<5x3xf32>
// CHECK-NEXT:        %acc = memref.load %c[%i] : memref<5xf32>
// CHECK-NEXT:        %s = arith.addf %x, %acc : f32
// CHECK-NEXT:        memref.store %s, %c[%i] : memref<5xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i_1 = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %k_1 = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %x_1 = memref.load %a[%k_1, %k_1] : memref<5x3xf32>
// CHECK-NEXT:        %j = arith.addi %i_1, %c1 : index
// CHECK-NEXT:        %prev = memref.load %d[%j] : memref<8xf32>
// CHECK-NEXT:        %s_1 = arith.addf %x_1, %prev : f32
// CHECK-NEXT:        memref.store %s_1, %d[%i_1] : memref<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i_2 = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %k_2 = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %x_2 = memref.load %a[%k_2, %k_2] : memref<5x3xf32>
// CHECK-NEXT:        %prev_1 = memref.load %d[%i_2] : memref<8xf32>
// CHECK-NEXT:        %s_2 = arith.addf %x_2, %prev_1 : f32
// CHECK-NEXT:        %j_1 = arith.addi %i_2, %c1 : index
// CHECK-NEXT:        memref.store %s_2, %d[%j_1] : memref<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %t = %c0 to %c8 step %c4 {
// CHECK-NEXT:      %end = arith.addi %t, %c4 : index
// CHECK-NEXT:      scf.for %k_3 = %c0 to %c3 step %c1 {
// CHECK-NEXT:        scf.for %i_3 = %t to %end step %c1 {
// CHECK-NEXT:          %x_3 = memref.load %a[%k_3, %k_3] : memref<5x3xf32>
// CHECK-NEXT:          %acc_1 = memref.load %d[%i_3] : memref<8xf32>
// CHECK-NEXT:          %s_3 = arith.addf %x_3, %acc_1 : f32
// CHECK-NEXT:          memref.store %s_3, %d[%i_3] : memref<8xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
