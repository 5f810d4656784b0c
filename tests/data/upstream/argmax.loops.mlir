// Upstream bufferization of argmax.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries --ownership-based-buffer-deallocation --buffer-deallocation-simplification --bufferization-lower-deallocations --canonicalize --convert-linalg-to-loops --canonicalize argmax.mlir
module {
  func.func @argmax(%arg0: memref<2x5xf32, strided<[?, ?], offset: ?>>) -> memref<2xi64> {
    %c5 = arith.constant 5 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %alloc = memref.alloc() alignment = 64 : memref<2xi64>
    scf.for %arg1 = %c0 to %c2 step %c1 {
      memref.store %c0_i64, %alloc[%arg1] : memref<2xi64>
    }
    %alloc_0 = memref.alloc() alignment = 64 : memref<2xf32>
    scf.for %arg1 = %c0 to %c2 step %c1 {
      memref.store %cst, %alloc_0[%arg1] : memref<2xf32>
    }
    scf.for %arg1 = %c0 to %c2 step %c1 {
      scf.for %arg2 = %c0 to %c5 step %c1 {
        %0 = memref.load %arg0[%arg1, %arg2] : memref<2x5xf32, strided<[?, ?], offset: ?>>
        %1 = memref.load %alloc_0[%arg1] : memref<2xf32>
        %2 = memref.load %alloc[%arg1] : memref<2xi64>
        %3 = arith.index_cast %arg2 : index to i64
        %4 = arith.maximumf %0, %1 : f32
        %5 = arith.cmpf ogt, %0, %1 : f32
        %6 = arith.select %5, %3, %2 : i64
        memref.store %4, %alloc_0[%arg1] : memref<2xf32>
        memref.store %6, %alloc[%arg1] : memref<2xi64>
      }
    }
    memref.dealloc %alloc_0 : memref<2xf32>
    return %alloc : memref<2xi64>
  }
}

