// Threefry-2x32 with 20 rounds, the counter-based random bit generator of Salmon, Moraes, Dror and
// Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11 (rotation constants 13 15 26 6 17 29
// 16 24, key-schedule parity 0x1BD11BDA, a key injection after every four rounds), in the form
// XLA's ThreeFryBitGenerator computes it (xla/hlo/builder/lib/prng.cc) and JAX's threefry2x32.
// Used by the CPU evaluator's rng-bit-generator algorithm=rng_three_fry
// (hlo/eval/kernels/rng_xla.cc); compiler/passes/rng_bit_generator_expander.cc writes the same
// rounds as HLO.
#pragma once

#include <array>
#include <cstdint>

namespace tpusim {

/// The two 32-bit output words of the 64-bit counter `x` (low word first) under the 64-bit `key`
/// (low word first). Pinned by JAX's values in tests/eval/rng_xla_test.cc.
std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key);

}  // namespace tpusim
