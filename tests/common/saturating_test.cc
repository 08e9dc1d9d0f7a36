// common/saturating.h: exact below 2^64, UINT64_MAX at and past it, never a wrapped value.
#include "common/saturating.h"

#include <gtest/gtest.h>

namespace tpusim {
namespace {

TEST(SaturatingTest, MulIsExactUntilItWouldWrap) {
  EXPECT_EQ(SaturatingMul(0, kSaturated), uint64_t{0});
  EXPECT_EQ(SaturatingMul(kSaturated, 0), uint64_t{0});
  EXPECT_EQ(SaturatingMul(kSaturated, 1), kSaturated);
  EXPECT_EQ(SaturatingMul(uint64_t{1} << 31, uint64_t{1} << 32), uint64_t{1} << 63);
  EXPECT_EQ(SaturatingMul(uint64_t{1} << 32, uint64_t{1} << 32), kSaturated);  // wraps to 0
  EXPECT_EQ(SaturatingMul(3, (kSaturated / 3) + 1), kSaturated);
  EXPECT_EQ(SaturatingMul(3, kSaturated / 3), kSaturated / 3 * 3);
}

TEST(SaturatingTest, AddIsExactUntilItWouldWrap) {
  EXPECT_EQ(SaturatingAdd(kSaturated - 1, 1), kSaturated);
  EXPECT_EQ(SaturatingAdd(kSaturated - 1, 2), kSaturated);  // wraps to 0
  EXPECT_EQ(SaturatingAdd(kSaturated, kSaturated), kSaturated);
  EXPECT_EQ(SaturatingAdd(40, 2), uint64_t{42});
  static_assert(SaturatingAdd(1, 2) == 3 && SaturatingMul(6, 7) == 42);
}

TEST(SaturatingTest, ProductMultipliesLeftToRightSaturating) {
  EXPECT_EQ(SaturatingProduct({}), uint64_t{1});
  EXPECT_EQ(SaturatingProduct({2, 3, 7}), uint64_t{42});
  EXPECT_EQ(SaturatingProduct({uint64_t{1} << 32, uint64_t{1} << 32, 3}), kSaturated);
  // A zero factor gives 0 wherever it stands (kSaturated x 0 is 0, as SaturatingMul says).
  EXPECT_EQ(SaturatingProduct({uint64_t{1} << 32, uint64_t{1} << 32, 0}), uint64_t{0});
  EXPECT_EQ(SaturatingProduct({0, uint64_t{1} << 32, uint64_t{1} << 32}), uint64_t{0});
  EXPECT_EQ(SaturatingProduct({uint64_t{1} << 31, uint64_t{1} << 32}), uint64_t{1} << 63);
  static_assert(SaturatingProduct({6, 7}) == 42);
}

}  // namespace
}  // namespace tpusim
