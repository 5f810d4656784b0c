// RUN: xrelay-opt %s -p channels-last -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t.x.npy', r.standard_normal((1, 2, 6, 6), dtype=np.float32)); np.save('%t.y.npy', r.standard_normal((1, 3, 4, 4), dtype=np.float32))"
// RUN: xrelay-run %s --input x=%t.x.npy --input y=%t.y.npy -o %t.before.npz
// RUN: xrelay-run %t.mlir --input x=%t.x.npy --input y=%t.y.npy -o %t.after.npz
// RUN: xrelay-opt %s -p build -o %t.built.mlir
// RUN: xrelay-run %t.built.mlir --input x=%t.x.npy --input y=%t.y.npy -o %t.built.npz
// RUN: python -c "import numpy as np; a = np.load('%t.before.npz'); assert all(np.allclose(a[k], np.load(f)[k], rtol=1e-5, atol=1e-5) for f in ('%t.after.npz', '%t.built.npz') for k in a)"

// Upstream's NCHW: a pad of the argument, a 3x3 convolution (the seed: windows on axes 2 and 3), its
// ReLU, a 3x3 max pool, an add of an argument, a global sum pool and its flattening, a 2x2 max pool of
// the argument itself and a concatenation of the first pool and the other argument on channels. Every
// image these make is stored NHWC: the argument is transposed in once (permutation [0, 2, 3, 1]) for
// its pad and its pool, and padded on axes 1 and 2; the concatenation joins axis 3; the convolution
// and the pools become generics reading their data through windows on axes 1 and 2 (the weight a
// copy (c, kh, kw, f): its output loop last), writing (n, oh, ow, f); the all-parallel ops get loops
// in the order of their output's axes (the ReLU's maps the identity; the argument %y, not stored, is read
// by the add with its channels at loop d3, and transposed in for the concatenation). What is returned
// and what is flattened is transposed back ([0, 3, 1, 2]). The outputs before, after and built agree.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x2x6x6xf32>, %y: tensor<1x3x4x4xf32>)
    -> (tensor<1x3x4x4xf32>, tensor<1x3xf32>, tensor<1x2x5x5xf32>, tensor<1x6x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %w = arith.constant dense<[[[[0.5, -1.0, 0.25], [2.0, 1.5, 0.0], [-0.5, 1.0, 1.0]], [[1.0, 1.0, -1.0], [0.5, 0.0, 0.75], [0.0, 2.0, -2.0]]], [[[0.125, 0.25, 0.5], [1.0, -0.25, 0.0], [0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], [[[-1.0, 0.5, -1.0], [0.5, -1.0, 0.5], [-1.0, 0.5, -1.0]], [[0.25, 0.25, 0.25], [0.25, 0.25, 0.25], [0.25, 0.25, 0.25]]]]> : tensor<3x2x3x3xf32>
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x3x6x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %w : tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) outs(%z : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  %re = tensor.empty() : tensor<1x3x6x6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<1x3x6x6xf32>) outs(%re : tensor<1x3x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x6x6xf32>
  %pe = tensor.empty() : tensor<1x3x4x4xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu, %window : tensor<1x3x6x6xf32>, tensor<3x3xf32>) outs(%pf : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %ae = tensor.empty() : tensor<1x3x4x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pool, %y : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%ae : tensor<1x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x3x4x4xf32>
  %ge = tensor.empty() : tensor<1x3x1x1xf32>
  %gf = linalg.fill ins(%zero : f32) outs(%ge : tensor<1x3x1x1xf32>) -> tensor<1x3x1x1xf32>
  %gw = tensor.empty() : tensor<4x4xf32>
  %global = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%sum, %gw : tensor<1x3x4x4xf32>, tensor<4x4xf32>) outs(%gf : tensor<1x3x1x1xf32>) -> tensor<1x3x1x1xf32>
  %flat = tensor.collapse_shape %global [[0], [1, 2, 3]] : tensor<1x3x1x1xf32> into tensor<1x3xf32>
  %xe = tensor.empty() : tensor<1x2x5x5xf32>
  %xf = linalg.fill ins(%ninf : f32) outs(%xe : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %xw = tensor.empty() : tensor<2x2xf32>
  %xpool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %xw : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%xf : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %cat = tensor.concat dim(1) %pool, %y : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x6x4x4xf32>
  func.return %sum, %flat, %xpool, %cat : tensor<1x3x4x4xf32>, tensor<1x3xf32>, tensor<1x2x5x5xf32>, tensor<1x6x4x4xf32>
}

// CHECK:      %[[XE:.*]] = tensor.empty() : tensor<1x6x6x2xf32>
// CHECK-NEXT: %[[XT:.*]] = linalg.transpose ins(%x:tensor<1x2x6x6xf32>) outs(%[[XE]]:tensor<1x6x6x2xf32>) permutation = [0, 2, 3, 1]
// CHECK-NEXT: %[[PAD:.*]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 1, 1, 0] {
// CHECK:      } : tensor<1x6x6x2xf32> to tensor<1x8x8x2xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x6x6x3xf32>
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%zero : f32) outs(%[[E]] : tensor<1x6x6x3xf32>)
// CHECK-NEXT: %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}5.000000e-01, 1.250000e-01, -1.000000e+00], {{.*}} : tensor<2x3x3x3xf32>
// CHECK-NEXT: %[[CONV:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d2 + d5), (d3 + d6), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3, d1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PAD]], %[[W]] : tensor<1x8x8x2xf32>, tensor<2x3x3x3xf32>) outs(%[[Z]] : tensor<1x6x6x3xf32>)
// CHECK:      %[[RELU:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[CONV]] : tensor<1x6x6x3xf32>)
// CHECK:      %[[POOL:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d2 + d4), (d3 + d5), d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>], {{.*}} ins(%[[RELU]], %window : tensor<1x6x6x3xf32>, tensor<3x3xf32>)
// CHECK:      %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%[[POOL]], %y : tensor<1x4x4x3xf32>, tensor<1x3x4x4xf32>)
// CHECK:      %[[SE:.*]] = tensor.empty() : tensor<1x3x4x4xf32>
// CHECK-NEXT: %[[BACK:.*]] = linalg.transpose ins(%[[SUM]]:tensor<1x4x4x3xf32>) outs(%[[SE]]:tensor<1x3x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK:      %[[GLOBAL:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %gw : tensor<1x4x4x3xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<1x1x1x3xf32>)
// CHECK:      %[[GE:.*]] = tensor.empty() : tensor<1x3x1x1xf32>
// CHECK-NEXT: %[[GT:.*]] = linalg.transpose ins(%[[GLOBAL]]:tensor<1x1x1x3xf32>) outs(%[[GE]]:tensor<1x3x1x1xf32>) permutation = [0, 3, 1, 2]
// CHECK-NEXT: %flat = tensor.collapse_shape %[[GT]]
// CHECK-NOT:  linalg.transpose ins(%x
// CHECK:      %[[XPOOL:.*]] = linalg.generic {{.*}} ins(%[[XT]], %xw : tensor<1x6x6x2xf32>, tensor<2x2xf32>)
// CHECK:      linalg.transpose ins(%[[XPOOL]]:tensor<1x5x5x2xf32>) outs(%{{.*}}:tensor<1x2x5x5xf32>) permutation = [0, 3, 1, 2]
// CHECK:      %[[YT:.*]] = linalg.transpose ins(%y:tensor<1x3x4x4xf32>) outs(%{{.*}}:tensor<1x4x4x3xf32>) permutation = [0, 2, 3, 1]
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(3) %[[POOL]], %[[YT]] : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x6xf32>
// CHECK:      linalg.transpose ins(%[[CAT]]:tensor<1x4x4x6xf32>) outs(%{{.*}}:tensor<1x6x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK:      func.return %[[BACK]], %flat, %{{.*}}, %{{.*}} :
