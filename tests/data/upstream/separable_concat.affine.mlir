// Upstream bufferization of separable_concat.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries --ownership-based-buffer-deallocation --buffer-deallocation-simplification --bufferization-lower-deallocations --canonicalize --convert-linalg-to-affine-loops --canonicalize separable_concat.mlir
module {
  memref.global "private" constant @__constant_4x3x3xf32 : memref<4x3x3xf32> = dense<[[[1.02045953, -1.27783251, 0.209049419], [-0.283884794, -0.226324648, -0.107798584], [-1.00999308, -0.115966186, -0.432606548]], [[1.66149974, 0.112893306, -0.176315397], [-0.140643716, -0.334023178, -0.527575254], [-0.195400491, 0.240972698, -0.119276807]], [[0.478879362, -0.0999010652, 0.0121297827], [0.772910416, 0.272552758, -0.252614379], [-0.0914194881, 0.270262569, 9.675440e-01]], [[-0.134810165, -0.121779338, 0.501156807], [-0.443229973, -0.145860121, 0.441269487], [0.290175021, 0.0457583517, 0.335052192]]]> alignment = 64
  memref.global "private" constant @__constant_xf32_0 : memref<f32> = dense<0.000000e+00> alignment = 64
  memref.global "private" constant @__constant_xf32 : memref<f32> = dense<6.000000e+00> alignment = 64
  memref.global "private" constant @__constant_4x4x1x1xf32 : memref<4x4x1x1xf32> = dense<[[[[0.138222873]], [[0.350272447]], [[-0.222383723]], [[-0.538202941]]], [[[0.0130624166]], [[-0.0263736546]], [[0.702799082]], [[3.737040e-01]]], [[[0.0969078242]], [[0.555816591]], [[-0.102761522]], [[-0.462949783]]], [[[0.292029142]], [[0.291269213]], [[-0.107414454]], [[-0.391404301]]]]> alignment = 64
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[-0.282816231, 0.102130681, -0.0959644765, -0.166861981]> alignment = 64
  func.func @separable_concat(%arg0: memref<1x4x6x6xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x8x6x6xf32> {
    %cst = arith.constant 6.000000e+00 : f32
    %cst_0 = arith.constant 7.500000e-01 : f32
    %cst_1 = arith.constant 1.000000e+00 : f32
    %cst_2 = arith.constant 1.000000e-03 : f32
    %cst_3 = arith.constant 3.000000e+00 : f32
    %cst_4 = arith.constant 0.000000e+00 : f32
    %cst_5 = arith.constant 0xFF800000 : f32
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %1 = memref.get_global @__constant_4x4x1x1xf32 : memref<4x4x1x1xf32>
    %2 = memref.get_global @__constant_4x3x3xf32 : memref<4x3x3xf32>
    %alloc = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 8 {
            affine.store %cst_4, %alloc[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
          }
        }
      }
    }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x4x8x8xf32> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    memref.copy %arg0, %subview : memref<1x4x6x6xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    %alloc_6 = memref.alloc() alignment = 64 : memref<1x4x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %0[%arg2] : memref<4xf32>
            affine.store %3, %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 6 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 4 {
            affine.for %arg5 = 0 to 3 {
              affine.for %arg6 = 0 to 3 {
                %3 = affine.load %alloc[%arg1, %arg4, %arg2 + %arg5, %arg3 + %arg6] : memref<1x4x8x8xf32>
                %4 = affine.load %2[%arg4, %arg5, %arg6] : memref<4x3x3xf32>
                %5 = affine.load %alloc_6[%arg1, %arg4, %arg2, %arg3] : memref<1x4x6x6xf32>
                %6 = arith.mulf %3, %4 : f32
                %7 = arith.addf %5, %6 : f32
                affine.store %7, %alloc_6[%arg1, %arg4, %arg2, %arg3] : memref<1x4x6x6xf32>
              }
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
            %4 = arith.cmpf ult, %3, %cst_4 : f32
            %5 = arith.select %4, %cst_4, %3 : f32
            %6 = arith.cmpf ugt, %5, %cst : f32
            %7 = arith.select %6, %cst, %5 : f32
            affine.store %7, %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
          }
        }
      }
    }
    %alloc_7 = memref.alloc() alignment = 64 : memref<1x4x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.store %cst_4, %alloc_7[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 4 {
              affine.for %arg6 = 0 to 1 {
                affine.for %arg7 = 0 to 1 {
                  %3 = affine.load %alloc_6[%arg1, %arg5, %arg3 + %arg6, %arg4 + %arg7] : memref<1x4x6x6xf32>
                  %4 = affine.load %1[%arg2, %arg5, %arg6, %arg7] : memref<4x4x1x1xf32>
                  %5 = affine.load %alloc_7[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
                  %6 = arith.mulf %3, %4 : f32
                  %7 = arith.addf %5, %6 : f32
                  affine.store %7, %alloc_7[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
                }
              }
            }
          }
        }
      }
    }
    %alloc_8 = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 8 {
            affine.store %cst_5, %alloc_8[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
          }
        }
      }
    }
    %subview_9 = memref.subview %alloc_8[0, 0, 1, 1] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x4x8x8xf32> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    memref.copy %arg0, %subview_9 : memref<1x4x6x6xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x4x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.store %cst_5, %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 3 {
              affine.for %arg6 = 0 to 3 {
                %3 = affine.load %alloc_8[%arg1, %arg2, %arg3 + %arg5, %arg4 + %arg6] : memref<1x4x8x8xf32>
                %4 = affine.load %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
                %5 = arith.maximumf %4, %3 : f32
                affine.store %5, %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
              }
            }
          }
        }
      }
    }
    %alloc_10 = memref.alloc() alignment = 64 : memref<1x8x6x6xf32>
    %subview_11 = memref.subview %alloc_10[0, 0, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1]>>
    memref.copy %alloc_7, %subview_11 : memref<1x4x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1]>>
    %subview_12 = memref.subview %alloc_10[0, 4, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1], offset: 144>>
    memref.copy %alloc_6, %subview_12 : memref<1x4x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 36, 6, 1], offset: 144>>
    %alloc_13 = memref.alloc() alignment = 64 : memref<1x8x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %alloc_10[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %4 = affine.load %alloc_10[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %5 = arith.mulf %3, %4 : f32
            affine.store %5, %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
          }
        }
      }
    }
    %expand_shape = memref.expand_shape %alloc_13 [[0], [1, 2], [3], [4]] output_shape [1, 1, 8, 6, 6] : memref<1x8x6x6xf32> into memref<1x1x8x6x6xf32>
    %alloc_14 = memref.alloc() alignment = 64 : memref<1x1x10x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 1 {
        affine.for %arg3 = 0 to 10 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 6 {
              affine.store %cst_4, %alloc_14[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x1x10x6x6xf32>
            }
          }
        }
      }
    }
    %subview_15 = memref.subview %alloc_14[0, 0, 1, 0, 0] [1, 1, 8, 6, 6] [1, 1, 1, 1, 1] : memref<1x1x10x6x6xf32> to memref<1x1x8x6x6xf32, strided<[360, 360, 36, 6, 1], offset: 36>>
    memref.copy %expand_shape, %subview_15 : memref<1x1x8x6x6xf32> to memref<1x1x8x6x6xf32, strided<[360, 360, 36, 6, 1], offset: 36>>
    %alloc_16 = memref.alloc() alignment = 64 : memref<1x10x6x6x1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 10 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 1 {
              %3 = affine.load %alloc_14[%arg1, %arg5, %arg2, %arg3, %arg4] : memref<1x1x10x6x6xf32>
              affine.store %3, %alloc_16[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x10x6x6x1xf32>
            }
          }
        }
      }
    }
    %alloc_17 = memref.alloc() alignment = 64 : memref<1x8x6x6x1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 1 {
              affine.store %cst_4, %alloc_17[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x8x6x6x1xf32>
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 1 {
              affine.for %arg6 = 0 to 3 {
                affine.for %arg7 = 0 to 1 {
                  affine.for %arg8 = 0 to 1 {
                    %3 = affine.load %alloc_16[%arg1, %arg2 + %arg6, %arg3 + %arg7, %arg4 + %arg8, %arg5] : memref<1x10x6x6x1xf32>
                    %4 = affine.load %alloc_17[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x8x6x6x1xf32>
                    %5 = arith.addf %4, %3 : f32
                    affine.store %5, %alloc_17[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x8x6x6x1xf32>
                  }
                }
              }
            }
          }
        }
      }
    }
    %alloc_18 = memref.alloc() alignment = 64 : memref<1x1x8x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 1 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 6 {
              %3 = affine.load %alloc_17[%arg1, %arg3, %arg4, %arg5, %arg2] : memref<1x8x6x6x1xf32>
              affine.store %3, %alloc_18[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x1x8x6x6xf32>
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 1 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 6 {
            affine.for %arg5 = 0 to 6 {
              %3 = affine.load %alloc_18[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x1x8x6x6xf32>
              %4 = arith.divf %3, %cst_3 : f32
              affine.store %4, %alloc_18[%arg1, %arg2, %arg3, %arg4, %arg5] : memref<1x1x8x6x6xf32>
            }
          }
        }
      }
    }
    %collapse_shape = memref.collapse_shape %alloc_18 [[0, 1], [2], [3], [4]] : memref<1x1x8x6x6xf32> into memref<1x8x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %collapse_shape[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %4 = arith.mulf %3, %cst_2 : f32
            affine.store %4, %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %4 = arith.addf %3, %cst_1 : f32
            affine.store %4, %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %4 = math.powf %3, %cst_0 : f32
            affine.store %4, %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 8 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            %3 = affine.load %alloc_10[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %4 = affine.load %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
            %5 = arith.divf %3, %4 : f32
            affine.store %5, %alloc_13[%arg1, %arg2, %arg3, %arg4] : memref<1x8x6x6xf32>
          }
        }
      }
    }
    memref.dealloc %alloc : memref<1x4x8x8xf32>
    memref.dealloc %alloc_6 : memref<1x4x6x6xf32>
    memref.dealloc %alloc_7 : memref<1x4x6x6xf32>
    memref.dealloc %alloc_8 : memref<1x4x8x8xf32>
    memref.dealloc %alloc_10 : memref<1x8x6x6xf32>
    memref.dealloc %alloc_14 : memref<1x1x10x6x6xf32>
    memref.dealloc %alloc_16 : memref<1x10x6x6x1xf32>
    memref.dealloc %alloc_17 : memref<1x8x6x6x1xf32>
    memref.dealloc %alloc_18 : memref<1x1x8x6x6xf32>
    return %alloc_13 : memref<1x8x6x6xf32>
  }
}

