// Options every CPU kernel takes: the thread count (results never depend on it; see parallel.h) and
// the byte limit for any one value the kernel allocates (Literal::Create refuses bigger ones).
#pragma once

#include <cstdint>

#include "hlo/eval/literal.h"

namespace tpusim::hlo {

struct KernelOptions {
  int threads = 1;
  int64_t max_bytes = Literal::kDefaultMaxBytes;
  /// Sums (an `add` reducer) over bf16/f16/f8 values in reduce, reduce-window, all-reduce and
  /// reduce-scatter accumulate in f32 and are rounded once to the element type (see
  /// EvaluatorOptions::f32_accumulation).
  bool f32_accumulation = true;
  /// > 0: f32 dot / convolution sums follow the MXU's order with weight tiles of this many rows
  /// (gemm.h MxuOrderGemmTile); 0: Eigen's order. Set per instruction by the evaluator (see
  /// EvaluatorOptions::mxu_rows).
  int64_t mxu_k_tile = 0;
  /// f32 batch-norm-training / -inference and the AwsNeuron composite custom calls compute in f32,
  /// op by op, in the order of the compiler's expansion of them (the TPU's arithmetic), instead of
  /// in f64 rounded once. Set from EvaluatorOptions::tpu_default_precision.
  bool tpu_expansions = false;
};

}  // namespace tpusim::hlo
