// common/philox.h: Philox-4x32-10 against Random123's known-answer vectors (its kat_vectors file;
// Salmon, Moraes, Dror and Shaw, SC'11). The ISA's vpu.rng_bits and the evaluator use this block
// function, so these vectors pin both (tests/isa/rng_bits_test.cc tests the instruction).
#include "common/philox.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace tpusim {
namespace {

using W = std::array<uint32_t, 4>;

TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}), (W{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (W{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (W{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

}  // namespace
}  // namespace tpusim
