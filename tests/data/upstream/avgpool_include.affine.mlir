// Upstream bufferization of avgpool_include.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries --ownership-based-buffer-deallocation --buffer-deallocation-simplification --bufferization-lower-deallocations --canonicalize --convert-linalg-to-affine-loops --canonicalize avgpool_include.mlir
module {
  func.func @avgpool_include(%arg0: memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x2x3x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 4.000000e+00 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x2x7x7xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 2 {
        affine.for %arg3 = 0 to 7 {
          affine.for %arg4 = 0 to 7 {
            affine.store %cst, %alloc[%arg1, %arg2, %arg3, %arg4] : memref<1x2x7x7xf32>
          }
        }
      }
    }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 2, 5, 5] [1, 1, 1, 1] : memref<1x2x7x7xf32> to memref<1x2x5x5xf32, strided<[98, 49, 7, 1], offset: 8>>
    memref.copy %arg0, %subview : memref<1x2x5x5xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x2x5x5xf32, strided<[98, 49, 7, 1], offset: 8>>
    %alloc_1 = memref.alloc() alignment = 64 : memref<1x2x3x3xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 2 {
        affine.for %arg3 = 0 to 3 {
          affine.for %arg4 = 0 to 3 {
            affine.store %cst, %alloc_1[%arg1, %arg2, %arg3, %arg4] : memref<1x2x3x3xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 2 {
        affine.for %arg3 = 0 to 3 {
          affine.for %arg4 = 0 to 3 {
            affine.for %arg5 = 0 to 2 {
              affine.for %arg6 = 0 to 2 {
                %0 = affine.load %alloc[%arg1, %arg2, %arg3 * 2 + %arg5, %arg4 * 2 + %arg6] : memref<1x2x7x7xf32>
                %1 = affine.load %alloc_1[%arg1, %arg2, %arg3, %arg4] : memref<1x2x3x3xf32>
                %2 = arith.addf %1, %0 : f32
                affine.store %2, %alloc_1[%arg1, %arg2, %arg3, %arg4] : memref<1x2x3x3xf32>
              }
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 2 {
        affine.for %arg3 = 0 to 3 {
          affine.for %arg4 = 0 to 3 {
            %0 = affine.load %alloc_1[%arg1, %arg2, %arg3, %arg4] : memref<1x2x3x3xf32>
            %1 = arith.divf %0, %cst_0 : f32
            affine.store %1, %alloc_1[%arg1, %arg2, %arg3, %arg4] : memref<1x2x3x3xf32>
          }
        }
      }
    }
    memref.dealloc %alloc : memref<1x2x7x7xf32>
    return %alloc_1 : memref<1x2x3x3xf32>
  }
}

