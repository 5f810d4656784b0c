// Upstream bufferization of avgpool_include.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries --ownership-based-buffer-deallocation --buffer-deallocation-simplification --bufferization-lower-deallocations --canonicalize --convert-linalg-to-loops --canonicalize avgpool_include.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1)>
module {
  func.func @avgpool_include(%arg0: memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x2x3x3xf32> {
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 4.000000e+00 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x2x7x7xf32>
    scf.for %arg1 = %c0 to %c2 step %c1 {
      scf.for %arg2 = %c0 to %c7 step %c1 {
        scf.for %arg3 = %c0 to %c7 step %c1 {
          memref.store %cst, %alloc[%c0, %arg1, %arg2, %arg3] : memref<1x2x7x7xf32>
        }
      }
    }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 2, 5, 5] [1, 1, 1, 1] : memref<1x2x7x7xf32> to memref<1x2x5x5xf32, strided<[98, 49, 7, 1], offset: 8>>
    memref.copy %arg0, %subview : memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x2x5x5xf32, strided<[98, 49, 7, 1], offset: 8>>
    %alloc_1 = memref.alloc() alignment = 64 : memref<1x2x3x3xf32>
    scf.for %arg1 = %c0 to %c2 step %c1 {
      scf.for %arg2 = %c0 to %c3 step %c1 {
        scf.for %arg3 = %c0 to %c3 step %c1 {
          memref.store %cst, %alloc_1[%c0, %arg1, %arg2, %arg3] : memref<1x2x3x3xf32>
        }
      }
    }
    scf.for %arg1 = %c0 to %c2 step %c1 {
      scf.for %arg2 = %c0 to %c3 step %c1 {
        scf.for %arg3 = %c0 to %c3 step %c1 {
          scf.for %arg4 = %c0 to %c2 step %c1 {
            scf.for %arg5 = %c0 to %c2 step %c1 {
              %0 = affine.apply #map(%arg2, %arg4)
              %1 = affine.apply #map(%arg3, %arg5)
              %2 = memref.load %alloc[%c0, %arg1, %0, %1] : memref<1x2x7x7xf32>
              %3 = memref.load %alloc_1[%c0, %arg1, %arg2, %arg3] : memref<1x2x3x3xf32>
              %4 = arith.addf %3, %2 : f32
              memref.store %4, %alloc_1[%c0, %arg1, %arg2, %arg3] : memref<1x2x3x3xf32>
            }
          }
        }
      }
    }
    scf.for %arg1 = %c0 to %c2 step %c1 {
      scf.for %arg2 = %c0 to %c3 step %c1 {
        scf.for %arg3 = %c0 to %c3 step %c1 {
          %0 = memref.load %alloc_1[%c0, %arg1, %arg2, %arg3] : memref<1x2x3x3xf32>
          %1 = arith.divf %0, %cst_0 : f32
          memref.store %1, %alloc_1[%c0, %arg1, %arg2, %arg3] : memref<1x2x3x3xf32>
        }
      }
    }
    memref.dealloc %alloc : memref<1x2x7x7xf32>
    return %alloc_1 : memref<1x2x3x3xf32>
  }
}

