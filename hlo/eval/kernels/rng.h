// rng-bit-generator on the CPU: deterministic, counter-based, but NOT bit-identical to XLA (XLA's
// three-fry/philox output layout depends on the backend). Documented scheme: Philox-4x32-10 (Salmon
// et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) with key = the low/high halves of
// state[0] and a 128-bit counter (state[1] low/high, block number); each block yields four u32 (or
// two u64) values in row-major order of the output. The new state is state with state[1] advanced
// by the number of blocks.
//
// Algorithms: this stream is tpusim's `rng_default`. XLA's RngBitGeneratorExpander replaces
// rng_default by the backend's default algorithm; on a TPU, rng_default is the TPU backend's own
// generator, whose bits XLA does not publish, so any deterministic stream is a faithful model of it
// (an assumption: its statistics, not its bits). `rng_three_fry` and `rng_philox` are XLA's
// ThreeFryBitGenerator / PhiloxBitGenerator, computed bit for bit as XLA does
// (hlo/eval/kernels/rng_xla.h).
#pragma once

#include <string>

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/attributes.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// `state` is u64[n >= 2]; `out` is the tuple (state shape, u32/u64/s32/s64 array). Returns the
/// tuple. rng_three_fry / rng_philox: XlaRngBitGenerator (rng_xla.h).
StatusOr<Literal> RngBitGenerator(const Literal& state, const Shape& out,
                                  RandomAlgorithm algorithm, const KernelOptions& options);

/// The module's random generator, as XLA's RngExpander builds `rng` from it: a state u64[2] =
/// {key, counter} that starts at {kRngKey, 0} for each evaluation and that every
/// rng-get-and-update-state (delta=D) returns and then advances by D, in evaluation order (the
/// compiler's rng-state-assignment gives each one the same value as a constant).
inline constexpr uint64_t kRngKey = 0;

/// The 32-bit words an rng of `shape` draws (its rng-get-and-update-state delta): one per element
/// for rng_uniform, two for rng_normal.
int64_t RngWords(RandomDistribution distribution, const Shape& shape);

/// rng(a, b) of float `out` (f32, bf16, f16) from `state`: w = the RngWords(out) words
/// rng-bit-generator draws from `state` (u32), u = bitcast-f32((w >> 9) | 0x3F800000) - 1 in [0, 1)
/// (XLA's ConvertRandomBitsToUniformFloatingPoint); rng_uniform: u * (b - a) + a; rng_normal
/// (Box-Muller, u1 from the first n words, u2 from the next n): sqrt(-2 * log(1 - u1)) *
/// cos(2pi * u2) * b + a (a = mean, b = sigma). Every step in f32, rounded once to `out`'s type
/// at the end: what compiler/passes/rng_expander.h writes as HLO, bit for bit. Unimplemented for
/// integer results, naming the shape.
StatusOr<Literal> RngFromState(RandomDistribution distribution, const Literal& a, const Literal& b,
                               const Literal& state, const Shape& out,
                               const KernelOptions& options);

}  // namespace tpusim::hlo
