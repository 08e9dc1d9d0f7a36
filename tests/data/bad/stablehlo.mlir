module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
