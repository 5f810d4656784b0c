// RUN: xrelay-opt %s -p 'fuse-multiply-add' | filecheck %s

// A matmul's accumulation: the product feeds only the sum (as either operand), so both become one
// math.fma. A product that is also stored stays, and so does the sum of it; an integer product too.
func.func @fma(%a: memref<4xf32>, %b: memref<4xf64>, %i: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  %y = memref.load %a[%c1] : memref<4xf32>
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %p, %x : f32
  memref.store %s, %a[%c0] : memref<4xf32>
  %u = memref.load %b[%c0] : memref<4xf64>
  %q = arith.mulf %u, %u : f64
  %t = arith.addf %u, %q : f64
  memref.store %t, %b[%c0] : memref<4xf64>
  %kept = arith.mulf %y, %y : f32
  %r = arith.addf %kept, %y : f32
  memref.store %kept, %a[%c1] : memref<4xf32>
  memref.store %r, %a[%c1] : memref<4xf32>
  %n = memref.load %i[%c0] : memref<4xi32>
  %m = arith.muli %n, %n : i32
  %k = arith.addi %m, %n : i32
  memref.store %k, %i[%c0] : memref<4xi32>
  func.return
}

// CHECK-LABEL: func.func @fma(
// CHECK:         %x = memref.load %a[%c0] : memref<4xf32>
// CHECK-NEXT:    %y = memref.load %a[%c1] : memref<4xf32>
// CHECK-NEXT:    %s = math.fma %x, %y, %x : f32
// CHECK-NEXT:    memref.store %s, %a[%c0] : memref<4xf32>
// CHECK-NEXT:    %u = memref.load %b[%c0] : memref<4xf64>
// CHECK-NEXT:    %t = math.fma %u, %u, %u : f64
// CHECK-NEXT:    memref.store %t, %b[%c0] : memref<4xf64>
// CHECK-NEXT:    %kept = arith.mulf %y, %y : f32
// CHECK-NEXT:    %r = arith.addf %kept, %y : f32
// CHECK:         %m = arith.muli %n, %n : i32
// CHECK-NEXT:    %k = arith.addi %m, %n : i32
