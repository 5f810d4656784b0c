// Upstream bufferization of small_cnn.mlir (tests/upstream_models.py), made by IREE 3.13:
//   iree-opt --one-shot-bufferize=bufferize-function-boundaries --ownership-based-buffer-deallocation --buffer-deallocation-simplification --bufferization-lower-deallocations --canonicalize --convert-linalg-to-affine-loops --canonicalize small_cnn.mlir
module {
  memref.global "private" constant @__constant_5xf32 : memref<5xf32> = dense<[0.358671963, 1.32245743, -0.0139146689, 1.04183972, 1.40226483]> alignment = 64
  memref.global "private" constant @__constant_5x4xf32 : memref<5x4xf32> = dense<[[-0.0757015273, 0.202114388, 0.694171965, -0.758369743], [1.420982, 0.726093769, 0.843732655, 1.16486394], [0.787588238, 0.84407866, 0.0755936131, -1.42677391], [-0.135045096, -0.76951462, -1.42274177, 0.258452803], [-0.568549454, -1.02980447, -1.04300106, 0.26841709]]> alignment = 64
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[-0.22501412, 0.0386369601, -0.0581640825, 0.0109279696]> alignment = 64
  memref.global "private" constant @__constant_4x3x3x3xf32 : memref<4x3x3x3xf32> = dense<"0x4F7F1A3D995422BDE3BC443EB9E6003DC18E24BEFC29DE3D5E4BC83EBD78913EFE2F58BE665EC2BE4C783FBE1E204B3CF78F32BFF46C86BD365FBFBED9F360BE453227BEB755C2BDE3E7FC3D4B21A03E82F11DBD88E3D13E0A594CBEC1F7D73DE5C58A3E6C0BE73C296764BEB7938DBE069D0CBEB349873DCD139BBE798480BDDBA743BDD425263EF6E2833D4B57DA3D2DDB48BEEC441FBD57D6703E1A64E53E7964C1BEE889E83EFAB9CE3ED404703E467BA23DCADFC0BDB5F3DF3E3F8C163F955D0A3FFCFFC93E1493DB3D0699B9BEC624AFBA4AAB493E6FE4C5BE54C3F23DDB0D043E07D3553E6AE1B5BE68464BBEAA1206BE7CAEB3BE5D95053F025818BE731ECA3DF2DD9EBDB038F33EB5CECA3EE190423EC43A29BF9ABB7F3C4507523E60359A3E30D23DBE33EE0B3F75D1CABEAE384BBEA99F8F3EFD1C713CA4C8193F03A7673D698442BE9BF9E7BD9C99A7BE6E40C4BE94A9413EBD88323E20D8C63E9DD067BE34B9013F2E92B0BD41D4F13EAAF304BEC2F061BED877993D636E9E3E3CD9453DDCDF33BEE802CEBE0446D7BE976C1A3E1A05983E9CE249BDBF05A5BE6A19863E23ABC4BEF50D5BBED5C63E3E"> alignment = 64
  func.func @small_cnn(%arg0: memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x5xf32> {
    %cst = arith.constant 1.600000e+01 : f32
    %c2_i64 = arith.constant 2 : i64
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 0xFF800000 : f32
    %c4_i64 = arith.constant 4 : i64
    %c5_i64 = arith.constant 5 : i64
    %0 = memref.get_global @__constant_4x3x3x3xf32 : memref<4x3x3x3xf32>
    %1 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %2 = memref.get_global @__constant_5x4xf32 : memref<5x4xf32>
    %3 = memref.get_global @__constant_5xf32 : memref<5xf32>
    %alloc = memref.alloc() alignment = 64 : memref<1x3x10x10xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 3 {
        affine.for %arg3 = 0 to 10 {
          affine.for %arg4 = 0 to 10 {
            affine.store %cst_0, %alloc[%arg1, %arg2, %arg3, %arg4] : memref<1x3x10x10xf32>
          }
        }
      }
    }
    %subview = memref.subview %alloc[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
    memref.copy %arg0, %subview : memref<1x3x8x8xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
    %alloc_2 = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 8 {
            %4 = affine.load %1[%arg2] : memref<4xf32>
            affine.store %4, %alloc_2[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 8 {
            affine.for %arg5 = 0 to 3 {
              affine.for %arg6 = 0 to 3 {
                affine.for %arg7 = 0 to 3 {
                  %4 = affine.load %alloc[%arg1, %arg5, %arg3 + %arg6, %arg4 + %arg7] : memref<1x3x10x10xf32>
                  %5 = affine.load %0[%arg2, %arg5, %arg6, %arg7] : memref<4x3x3x3xf32>
                  %6 = affine.load %alloc_2[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
                  %7 = arith.mulf %4, %5 : f32
                  %8 = arith.addf %6, %7 : f32
                  affine.store %8, %alloc_2[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
                }
              }
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 8 {
          affine.for %arg4 = 0 to 8 {
            %4 = affine.load %alloc_2[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
            %5 = arith.cmpf ugt, %4, %cst_0 : f32
            %6 = arith.select %5, %4, %cst_0 : f32
            affine.store %6, %alloc_2[%arg1, %arg2, %arg3, %arg4] : memref<1x4x8x8xf32>
          }
        }
      }
    }
    %alloc_3 = memref.alloc() alignment = 64 : memref<1x4x10x10xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 10 {
          affine.for %arg4 = 0 to 10 {
            affine.store %cst_1, %alloc_3[%arg1, %arg2, %arg3, %arg4] : memref<1x4x10x10xf32>
          }
        }
      }
    }
    %subview_4 = memref.subview %alloc_3[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1] : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
    memref.copy %alloc_2, %subview_4 : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
    %alloc_5 = memref.alloc() alignment = 64 : memref<1x4x4x4xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 4 {
          affine.for %arg4 = 0 to 4 {
            affine.store %cst_1, %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 4 {
          affine.for %arg4 = 0 to 4 {
            affine.for %arg5 = 0 to 3 {
              affine.for %arg6 = 0 to 3 {
                %4 = affine.load %alloc_3[%arg1, %arg2, %arg3 * 2 + %arg5, %arg4 * 2 + %arg6] : memref<1x4x10x10xf32>
                %5 = affine.load %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
                %6 = arith.maximumf %5, %4 : f32
                affine.store %6, %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
              }
            }
          }
        }
      }
    }
    %alloc_6 = memref.alloc() alignment = 64 : memref<1x4x6x6xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 6 {
          affine.for %arg4 = 0 to 6 {
            affine.store %cst_0, %alloc_6[%arg1, %arg2, %arg3, %arg4] : memref<1x4x6x6xf32>
          }
        }
      }
    }
    %subview_7 = memref.subview %alloc_6[0, 0, 1, 1] [1, 4, 4, 4] [1, 1, 1, 1] : memref<1x4x6x6xf32> to memref<1x4x4x4xf32, strided<[144, 36, 6, 1], offset: 7>>
    memref.copy %alloc_5, %subview_7 : memref<1x4x4x4xf32> to memref<1x4x4x4xf32, strided<[144, 36, 6, 1], offset: 7>>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 4 {
          affine.for %arg4 = 0 to 4 {
            affine.store %cst_0, %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 4 {
          affine.for %arg4 = 0 to 4 {
            affine.for %arg5 = 0 to 3 {
              affine.for %arg6 = 0 to 3 {
                %4 = affine.load %alloc_6[%arg1, %arg2, %arg3 + %arg5, %arg4 + %arg6] : memref<1x4x6x6xf32>
                %5 = affine.load %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
                %6 = arith.addf %5, %4 : f32
                affine.store %6, %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
              }
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 4 {
          affine.for %arg4 = 0 to 4 {
            %4 = affine.load %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
            %5 = arith.index_cast %arg3 : index to i64
            %6 = arith.subi %5, %c1_i64 : i64
            %7 = arith.addi %5, %c2_i64 : i64
            %8 = arith.minsi %7, %c5_i64 : i64
            %9 = arith.minsi %8, %c4_i64 : i64
            %10 = arith.subi %c1_i64, %5 : i64
            %11 = arith.maxsi %10, %c0_i64 : i64
            %12 = arith.subi %9, %6 : i64
            %13 = arith.subi %12, %11 : i64
            %14 = arith.maxsi %13, %c0_i64 : i64
            %15 = arith.index_cast %arg4 : index to i64
            %16 = arith.subi %15, %c1_i64 : i64
            %17 = arith.addi %15, %c2_i64 : i64
            %18 = arith.minsi %17, %c5_i64 : i64
            %19 = arith.minsi %18, %c4_i64 : i64
            %20 = arith.subi %c1_i64, %15 : i64
            %21 = arith.maxsi %20, %c0_i64 : i64
            %22 = arith.subi %19, %16 : i64
            %23 = arith.subi %22, %21 : i64
            %24 = arith.maxsi %23, %c0_i64 : i64
            %25 = arith.muli %14, %24 : i64
            %26 = arith.sitofp %25 : i64 to f32
            %27 = arith.divf %4, %26 : f32
            affine.store %27, %alloc_5[%arg1, %arg2, %arg3, %arg4] : memref<1x4x4x4xf32>
          }
        }
      }
    }
    %alloc_8 = memref.alloc() alignment = 64 : memref<1x4x1x1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 1 {
          affine.for %arg4 = 0 to 1 {
            affine.store %cst_0, %alloc_8[%arg1, %arg2, %arg3, %arg4] : memref<1x4x1x1xf32>
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 1 {
          affine.for %arg4 = 0 to 1 {
            affine.for %arg5 = 0 to 4 {
              affine.for %arg6 = 0 to 4 {
                %4 = affine.load %alloc_5[%arg1, %arg2, %arg3 + %arg5, %arg4 + %arg6] : memref<1x4x4x4xf32>
                %5 = affine.load %alloc_8[%arg1, %arg2, %arg3, %arg4] : memref<1x4x1x1xf32>
                %6 = arith.addf %5, %4 : f32
                affine.store %6, %alloc_8[%arg1, %arg2, %arg3, %arg4] : memref<1x4x1x1xf32>
              }
            }
          }
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 1 {
          affine.for %arg4 = 0 to 1 {
            %4 = affine.load %alloc_8[%arg1, %arg2, %arg3, %arg4] : memref<1x4x1x1xf32>
            %5 = arith.divf %4, %cst : f32
            affine.store %5, %alloc_8[%arg1, %arg2, %arg3, %arg4] : memref<1x4x1x1xf32>
          }
        }
      }
    }
    %collapse_shape = memref.collapse_shape %alloc_8 [[0], [1, 2, 3]] : memref<1x4x1x1xf32> into memref<1x4xf32>
    %alloc_9 = memref.alloc() alignment = 64 : memref<4x5xf32>
    affine.for %arg1 = 0 to 4 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %2[%arg2, %arg1] : memref<5x4xf32>
        affine.store %4, %alloc_9[%arg1, %arg2] : memref<4x5xf32>
      }
    }
    %alloc_10 = memref.alloc() alignment = 64 : memref<1x5xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        affine.store %cst_0, %alloc_10[%arg1, %arg2] : memref<1x5xf32>
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        affine.for %arg3 = 0 to 4 {
          %4 = affine.load %collapse_shape[%arg1, %arg3] : memref<1x4xf32>
          %5 = affine.load %alloc_9[%arg3, %arg2] : memref<4x5xf32>
          %6 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
          %7 = arith.mulf %4, %5 : f32
          %8 = arith.addf %6, %7 : f32
          affine.store %8, %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        }
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        %5 = affine.load %3[%arg2] : memref<5xf32>
        %6 = arith.addf %4, %5 : f32
        affine.store %6, %alloc_10[%arg1, %arg2] : memref<1x5xf32>
      }
    }
    %alloc_11 = memref.alloc() alignment = 64 : memref<1xi64>
    affine.for %arg1 = 0 to 1 {
      affine.store %c0_i64, %alloc_11[%arg1] : memref<1xi64>
    }
    %alloc_12 = memref.alloc() alignment = 64 : memref<1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.store %cst_1, %alloc_12[%arg1] : memref<1xf32>
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        %5 = affine.load %alloc_12[%arg1] : memref<1xf32>
        %6 = affine.load %alloc_11[%arg1] : memref<1xi64>
        %7 = arith.index_cast %arg2 : index to i64
        %8 = arith.maximumf %4, %5 : f32
        %9 = arith.cmpf ogt, %4, %5 : f32
        %10 = arith.select %9, %7, %6 : i64
        affine.store %8, %alloc_12[%arg1] : memref<1xf32>
        affine.store %10, %alloc_11[%arg1] : memref<1xi64>
      }
    }
    %expand_shape = memref.expand_shape %alloc_12 [[0, 1]] output_shape [1, 1] : memref<1xf32> into memref<1x1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        %5 = affine.load %expand_shape[%arg1, 0] : memref<1x1xf32>
        %6 = arith.subf %4, %5 : f32
        affine.store %6, %alloc_10[%arg1, %arg2] : memref<1x5xf32>
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        %5 = math.exp %4 : f32
        affine.store %5, %alloc_10[%arg1, %arg2] : memref<1x5xf32>
      }
    }
    %alloc_13 = memref.alloc() alignment = 64 : memref<1x1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 1 {
        affine.store %cst_0, %alloc_13[%arg1, %arg2] : memref<1x1xf32>
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        %5 = affine.load %alloc_13[%arg1, 0] : memref<1x1xf32>
        %6 = arith.addf %4, %5 : f32
        affine.store %6, %alloc_13[%arg1, 0] : memref<1x1xf32>
      }
    }
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 5 {
        %4 = affine.load %alloc_10[%arg1, %arg2] : memref<1x5xf32>
        %5 = affine.load %alloc_13[%arg1, 0] : memref<1x1xf32>
        %6 = arith.divf %4, %5 : f32
        affine.store %6, %alloc_10[%arg1, %arg2] : memref<1x5xf32>
      }
    }
    memref.dealloc %alloc : memref<1x3x10x10xf32>
    memref.dealloc %alloc_2 : memref<1x4x8x8xf32>
    memref.dealloc %alloc_3 : memref<1x4x10x10xf32>
    memref.dealloc %alloc_5 : memref<1x4x4x4xf32>
    memref.dealloc %alloc_6 : memref<1x4x6x6xf32>
    memref.dealloc %alloc_8 : memref<1x4x1x1xf32>
    memref.dealloc %alloc_9 : memref<4x5xf32>
    memref.dealloc %alloc_11 : memref<1xi64>
    memref.dealloc %alloc_12 : memref<1xf32>
    memref.dealloc %alloc_13 : memref<1x1xf32>
    return %alloc_10 : memref<1x5xf32>
  }
}

