// common/threefry.h: Threefry-2x32-20 against Random123's known-answer vectors (its kat_vectors
// file, "threefry2x32 20 CTR KEY -> OUT"; the same three vectors JAX's random_test pins for its
// threefry_2x32). tests/eval/rng_xla_test.cc checks the evaluator's rng_three_fry built on it
// against XLA's own bits.
#include "common/threefry.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace tpusim {
namespace {

using W = std::array<uint32_t, 2>;

TEST(ThreefryTest, KnownAnswers) {
  EXPECT_EQ(Threefry2x32({0, 0}, {0, 0}), (W{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(Threefry2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (W{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(Threefry2x32({0x243f6a88, 0x85a308d3}, {0x13198a2e, 0x03707344}),
            (W{0xc4923a9c, 0x483df7a0}));
}

TEST(ThreefryTest, EveryInputWordChangesBothOutputWords) {
  const W base = Threefry2x32({1, 2}, {3, 4});
  for (const W& other : {Threefry2x32({0, 2}, {3, 4}), Threefry2x32({1, 3}, {3, 4}),
                         Threefry2x32({1, 2}, {2, 4}), Threefry2x32({1, 2}, {3, 5})}) {
    EXPECT_NE(other[0], base[0]);
    EXPECT_NE(other[1], base[1]);
  }
}

}  // namespace
}  // namespace tpusim
