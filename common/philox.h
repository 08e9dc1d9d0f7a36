// Philox-4x32-10, the counter-based random bit generator of Salmon, Moraes, Dror and Shaw,
// "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11 (round constants and Weyl key increments
// from §4 of the paper). One implementation for the CPU evaluator's rng-bit-generator
// (hlo/eval/kernels/rng.cc) and the ISA's vpu.rng_bits (isa/opcodes.def), so the simulated
// random bits are the reference's bit for bit.
#pragma once

#include <array>
#include <cstdint>

namespace tpusim {

/// The 10-round Philox block function: four 32-bit output words of the 128-bit `counter` under
/// the 64-bit `key` (two 32-bit words). Pinned by the paper's known-answer vector in
/// tests/isa/rng_bits_test.cc.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

}  // namespace tpusim
