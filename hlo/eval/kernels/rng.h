// rng-bit-generator on the CPU: deterministic, counter-based, but NOT bit-identical to XLA (XLA's
// three-fry/philox output layout depends on the backend). Documented scheme: Philox-4x32-10 (Salmon
// et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) with key = the low/high halves of
// state[0] and a 128-bit counter (state[1] low/high, block number); each block yields four u32 (or
// two u64) values in row-major order of the output. The new state is state with state[1] advanced
// by the number of blocks. Algorithm choice (rng_default / rng_three_fry / rng_philox) does not
// change the stream here.
#pragma once

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// `state` is u64[n >= 2]; `out` is the tuple (state shape, u32/u64/s32/s64 array). Returns the
/// tuple.
StatusOr<Literal> RngBitGenerator(const Literal& state, const Shape& out,
                                  const KernelOptions& options);

}  // namespace tpusim::hlo
