// Upstream bufferization of argmax.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries --ownership-based-buffer-deallocation --buffer-deallocation-simplification --bufferization-lower-deallocations --canonicalize --convert-linalg-to-affine-loops --canonicalize argmax.mlir
module {
  func.func @argmax(%arg0: memref<2x5xf32, strided<[?, ?], offset: ?>>) -> memref<2xi64> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %alloc = memref.alloc() alignment = 64 : memref<2xi64>
    affine.for %arg1 = 0 to 2 {
      affine.store %c0_i64, %alloc[%arg1] : memref<2xi64>
    }
    %alloc_0 = memref.alloc() alignment = 64 : memref<2xf32>
    affine.for %arg1 = 0 to 2 {
      affine.store %cst, %alloc_0[%arg1] : memref<2xf32>
    }
    affine.for %arg1 = 0 to 2 {
      affine.for %arg2 = 0 to 5 {
        %0 = affine.load %arg0[%arg1, %arg2] : memref<2x5xf32, strided<[?, ?], offset: ?>>
        %1 = affine.load %alloc_0[%arg1] : memref<2xf32>
        %2 = affine.load %alloc[%arg1] : memref<2xi64>
        %3 = arith.index_cast %arg2 : index to i64
        %4 = arith.maximumf %0, %1 : f32
        %5 = arith.cmpf ogt, %0, %1 : f32
        %6 = arith.select %5, %3, %2 : i64
        affine.store %4, %alloc_0[%arg1] : memref<2xf32>
        affine.store %6, %alloc[%arg1] : memref<2xi64>
      }
    }
    memref.dealloc %alloc_0 : memref<2xf32>
    return %alloc : memref<2xi64>
  }
}

