// rng-bit-generator with algorithm=rng_three_fry or rng_philox on the CPU, bit for bit what XLA
// computes: XLA expands the op (xla/service/rng_bit_generator_expander.cc) into its
// ThreeFryBitGenerator / PhiloxBitGenerator (xla/hlo/builder/lib/prng.cc). For state u64[n],
// key = state[0]; bits of `out` (u8, u16, u32 or u64):
//
//   rng_three_fry (n = 2): counter c = state[1]. u32 bits: the shape is split into halves along
//     its first even dimension (none even: its largest, rounded up), c + h for the h-th element of
//     the half shape (row-major) gives Threefry2x32 words (w0, w1), and element k of the split
//     dimension takes w[k % 2] of half element k / 2; new state {key, c + half count}. u64 bits:
//     element i is w0 | w1 << 32 of c + i; new state {key, c + count}. u8/u16: the u32 bits,
//     truncated.
//   rng_philox (n = 2 or 3): 128-bit counter (low, high) = (state[1], state[2]) for n = 3,
//     (state[1], state[0]) for n = 2. Block b is Philox4x32-10 of the counter + b (carry into the
//     high word) under key (low, high halves of state[0]); u32 bits: element 4b + j is word j of
//     block b; u64 bits: 2b + j is word 2j | word 2j+1 << 32; u8/u16: the u32 bits, truncated.
//     New state {key, low + blocks} (n = 2), {key, low + blocks, high + carry} (n = 3).
//
// Pinned by JAX's values (jax.lax.rng_bit_generator on XLA:CPU) in tests/eval/rng_xla_test.cc;
// compiler/passes/rng_bit_generator_expander.cc writes the same computation as HLO for the device.
#pragma once

#include <string>

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// Empty when XLA's expansion of rng-bit-generator `algorithm` (rng_three_fry or rng_philox) takes
/// state `state` and bits `bits` (see the file comment); else why not, for the evaluator's and the
/// compiler's errors alike.
std::string XlaRngUnsupported(RandomAlgorithm algorithm, const Shape& state, const Shape& bits);

/// The split of rng_three_fry's u32 bits: the dimension of `dims` split into halves (-1 for a
/// scalar), as XLA's SplitShapeIntoHalves picks it.
int64_t ThreeFrySplitDimension(const std::vector<int64_t>& dims);

/// XLA's rng-bit-generator (algorithm rng_three_fry or rng_philox) of u64 `state` into `out`, the
/// tuple (state shape, bits shape). InvalidArgument / Unimplemented as XlaRngUnsupported says.
StatusOr<Literal> XlaRngBitGenerator(const Literal& state, const Shape& out,
                                     RandomAlgorithm algorithm, const KernelOptions& options);

}  // namespace tpusim::hlo
