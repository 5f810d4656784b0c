// RUN: xrelay-opt %s -p canonicalize-inits -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.random.default_rng(0).standard_normal((1, 2, 5, 5), dtype=np.float32))"
// RUN: python -c "import numpy as np; np.save('%t.k.npy', np.random.default_rng(1).integers(-9, 9, (4, 3), dtype=np.int32))"
// RUN: xrelay-run %s --input x=%t.x.npy --input k=%t.k.npy -o %t.before.npz
// RUN: xrelay-run %t.mlir --input x=%t.x.npy --input k=%t.k.npy -o %t.after.npz
// RUN: xrelay-opt %s -p build -o %t.built.mlir
// RUN: xrelay-run %t.built.mlir --input x=%t.x.npy --input k=%t.k.npy -o %t.built.npz
// RUN: python -c "import numpy as np; a = np.load('%t.before.npz'); assert all(np.allclose(a[k], np.load(f)[k], rtol=1e-6, atol=1e-6) and a[k].dtype == np.load(f)[k].dtype for f in ('%t.after.npz', '%t.built.npz') for k in a)"

// Upstream's forms: a convolution and a max pool accumulating into a broadcast (torch-mlir's conv +
// bias), an integer sum from a broadcast, one tensor.empty shared by two elementwise ops. Each
// reduction from a broadcast starts from a fill of its combining op's identity (-0.0 for addf, -inf
// for maximumf, 0 for addi) and an elementwise op combines its result with the broadcast's source,
// read with the broadcast's map; each op gets an empty of its own. Not rewritten: an elementwise op
// writing into a broadcast (its body does not fold its init) and a product reduction (mulf: no
// identity listed). Run before and after (and built), the outputs agree.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x2x5x5xf32>, %k: tensor<4x3xi32>)
    -> (tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>, tensor<4xi32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>,
        tensor<1x2x5x5xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<[[[[0.5, -1.0], [0.25, 2.0]], [[1.5, 0.0], [-0.5, 1.0]]], [[[1.0, 1.0], [1.0, 1.0]], [[-1.0, 0.5], [0.0, 0.75]]], [[[0.0, 2.0], [-2.0, 0.0]], [[0.125, 0.25], [0.5, 1.0]]]]> : tensor<3x2x2x2xf32>
  %bias = arith.constant dense<[0.5, -1.5, 2.0]> : tensor<3xf32>
  %floor = arith.constant dense<[0.75, -0.25]> : tensor<2xf32>
  %ibias = arith.constant dense<[1, -2, 3, 100]> : tensor<4xi32>
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %bc = linalg.broadcast ins(%bias : tensor<3xf32>) outs(%e : tensor<1x3x2x2xf32>) dimensions = [0, 2, 3]
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) outs(%bc : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %pe = tensor.empty() : tensor<1x2x2x2xf32>
  %pbc = linalg.broadcast ins(%floor : tensor<2xf32>) outs(%pe : tensor<1x2x2x2xf32>) dimensions = [0, 2, 3]
  %window = tensor.empty() : tensor<3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %window : tensor<1x2x5x5xf32>, tensor<3x3xf32>) outs(%pbc : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %ie = tensor.empty() : tensor<4xi32>
  %ibc = linalg.broadcast ins(%ibias : tensor<4xi32>) outs(%ie : tensor<4xi32>) dimensions = []
  %isum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%k : tensor<4x3xi32>) outs(%ibc : tensor<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  %shared = tensor.empty() : tensor<1x2x5x5xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x5x5xf32>) outs(%shared : tensor<1x2x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x2x5x5xf32>
  %twice = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x5x5xf32>) outs(%shared : tensor<1x2x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<1x2x5x5xf32>
  %ee = tensor.empty() : tensor<1x2x5x5xf32>
  %ebc = linalg.broadcast ins(%floor : tensor<2xf32>) outs(%ee : tensor<1x2x5x5xf32>) dimensions = [0, 2, 3]
  %emax = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x5x5xf32>) outs(%ebc : tensor<1x2x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<1x2x5x5xf32>
  %me = tensor.empty() : tensor<1x2x1x1xf32>
  %mbc = linalg.broadcast ins(%floor : tensor<2xf32>) outs(%me : tensor<1x2x1x1xf32>) dimensions = [0, 2, 3]
  %prod = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x2x5x5xf32>) outs(%mbc : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %acc : f32
    linalg.yield %p : f32
  } -> tensor<1x2x1x1xf32>
  func.return %conv, %pool, %isum, %neg, %twice, %emax, %prod : tensor<1x3x2x2xf32>, tensor<1x2x2x2xf32>, tensor<4xi32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x1x1xf32>
}

// CHECK:      %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-NEXT: %[[ZE:.*]] = tensor.empty() : tensor<1x3x2x2xf32>
// CHECK-NEXT: %[[ZF:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[ZE]] : tensor<1x3x2x2xf32>)
// CHECK-NEXT: %[[CONV:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%x, %w : {{.*}}) outs(%[[ZF]] : tensor<1x3x2x2xf32>)
// CHECK-NEXT: %[[BE:.*]] = tensor.empty() : tensor<1x3x2x2xf32>
// CHECK-NEXT: %[[CB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[CONV]], %bias : tensor<1x3x2x2xf32>, tensor<3xf32>) outs(%[[BE]] : tensor<1x3x2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:   linalg.yield %[[S]] : f32
// CHECK:      %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT: %[[PE:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK-NEXT: %[[PF:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[PE]] : tensor<1x2x2x2xf32>)
// CHECK-NEXT: %[[POOL:.*]] = linalg.pooling_nchw_max {{.*}} outs(%[[PF]] : tensor<1x2x2x2xf32>)
// CHECK-NEXT: tensor.empty() : tensor<1x2x2x2xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[POOL]], %floor : tensor<1x2x2x2xf32>, tensor<2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   arith.maximumf
// CHECK:      %[[IZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[IE:.*]] = tensor.empty() : tensor<4xi32>
// CHECK-NEXT: %[[IF:.*]] = linalg.fill ins(%[[IZERO]] : i32) outs(%[[IE]] : tensor<4xi32>)
// CHECK-NEXT: %[[ISUM:.*]] = linalg.generic {{.*}} outs(%[[IF]] : tensor<4xi32>)
// CHECK:      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[ISUM]], %ibias : tensor<4xi32>, tensor<4xi32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   arith.addi
// CHECK:      %[[SHARED:.*]] = tensor.empty() : tensor<1x2x5x5xf32>
// CHECK-NEXT: %[[OWN:.*]] = tensor.empty() : tensor<1x2x5x5xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%x : tensor<1x2x5x5xf32>) outs(%[[OWN]] : tensor<1x2x5x5xf32>)
// CHECK:        arith.negf
// CHECK:      linalg.generic {{.*}} ins(%x : tensor<1x2x5x5xf32>) outs(%[[SHARED]] : tensor<1x2x5x5xf32>)
// CHECK:        arith.addf
// CHECK:      linalg.broadcast ins(%floor:tensor<2xf32>) outs(%{{.*}}:tensor<1x2x5x5xf32>)
// CHECK:      arith.maximumf %in{{.*}}, %out
// CHECK:      linalg.broadcast ins(%floor:tensor<2xf32>) outs(%{{.*}}:tensor<1x2x1x1xf32>)
// CHECK:      arith.mulf %in{{.*}}, %acc
