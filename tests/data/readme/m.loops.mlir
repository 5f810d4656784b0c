// What README.md's upstream route makes of tests/test_readme.py's m.onnx (IREE 3.13), for its fast run
module {
  func.func @m(%arg0: memref<1x3x224x224xf32, strided<[?, ?, ?, ?], offset: ?>>, %arg1: memref<1x3x1x1xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x1x224x224xf32> {
    %c3 = arith.constant 3 : index
    %c224 = arith.constant 224 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() alignment = 64 : memref<1x1x224x224xf32>
    scf.for %arg2 = %c0 to %c224 step %c1 {
      scf.for %arg3 = %c0 to %c224 step %c1 {
        memref.store %cst, %alloc[%c0, %c0, %arg2, %arg3] : memref<1x1x224x224xf32>
      }
    }
    scf.for %arg2 = %c0 to %c224 step %c1 {
      scf.for %arg3 = %c0 to %c224 step %c1 {
        scf.for %arg4 = %c0 to %c3 step %c1 {
          %0 = memref.load %arg0[%c0, %arg4, %arg2, %arg3] : memref<1x3x224x224xf32, strided<[?, ?, ?, ?], offset: ?>>
          %1 = memref.load %arg1[%c0, %arg4, %c0, %c0] : memref<1x3x1x1xf32, strided<[?, ?, ?, ?], offset: ?>>
          %2 = memref.load %alloc[%c0, %c0, %arg2, %arg3] : memref<1x1x224x224xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          memref.store %4, %alloc[%c0, %c0, %arg2, %arg3] : memref<1x1x224x224xf32>
        }
      }
    }
    scf.for %arg2 = %c0 to %c224 step %c1 {
      scf.for %arg3 = %c0 to %c224 step %c1 {
        %0 = memref.load %alloc[%c0, %c0, %arg2, %arg3] : memref<1x1x224x224xf32>
        %1 = arith.cmpf ugt, %0, %cst : f32
        %2 = arith.select %1, %0, %cst : f32
        memref.store %2, %alloc[%c0, %c0, %arg2, %arg3] : memref<1x1x224x224xf32>
      }
    }
    return %alloc : memref<1x1x224x224xf32>
  }
}

