// common/float8.h: f8e4m3fn and f8e5m2 encodings and rounding, against values worked out from the
// formats' definitions (OCP FP8; ml_dtypes' float8_e4m3fn / float8_e5m2).
#include "common/float8.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tpusim {
namespace {

constexpr Float8Format kE4 = Float8Format::kE4M3FN;
constexpr Float8Format kE5 = Float8Format::kE5M2;

TEST(Float8Test, EveryFiniteBitPatternRoundTrips) {
  for (Float8Format f : {kE4, kE5}) {
    for (int b = 0; b < 256; ++b) {
      const float v = Float8ToFloat(f, static_cast<uint8_t>(b));
      if (std::isnan(v)) continue;
      EXPECT_EQ(Float8FromDouble(f, v), b) << "format " << static_cast<int>(f) << " bits " << b;
    }
  }
}

TEST(Float8Test, KnownEncodings) {
  EXPECT_EQ(Float8FromDouble(kE4, 1.0), 0x38);
  EXPECT_EQ(Float8FromDouble(kE4, -2.0), 0xC0);
  EXPECT_EQ(Float8FromDouble(kE4, 448.0), 0x7E);     // largest finite
  EXPECT_EQ(Float8FromDouble(kE4, 0x1p-9), 0x01);    // smallest subnormal
  EXPECT_EQ(Float8FromDouble(kE4, 0x1p-6), 0x08);    // smallest normal
  EXPECT_EQ(Float8FromDouble(kE5, 1.0), 0x3C);
  EXPECT_EQ(Float8FromDouble(kE5, 57344.0), 0x7B);   // largest finite
  EXPECT_EQ(Float8FromDouble(kE5, 0x1p-16), 0x01);   // smallest subnormal
  EXPECT_EQ(Float8FromDouble(kE5, -0.0), 0x80);      // the sign of zero is kept
  EXPECT_EQ(Float8ToFloat(kE4, 0x7E), 448.0f);
  EXPECT_EQ(Float8ToFloat(kE5, 0x7C), INFINITY);
  EXPECT_EQ(Float8ToFloat(kE5, 0xFC), -INFINITY);
  EXPECT_TRUE(std::isnan(Float8ToFloat(kE4, 0x7F)));
  EXPECT_TRUE(std::isnan(Float8ToFloat(kE4, 0xFF)));
  EXPECT_EQ(Float8ToFloat(kE4, 0x78), 256.0f);  // exponent 15 is finite in e4m3fn
  EXPECT_TRUE(std::isnan(Float8ToFloat(kE5, 0x7D)));
}

TEST(Float8Test, RoundsToNearestEven) {
  EXPECT_EQ(Float8ToFloat(kE4, Float8FromDouble(kE4, 1.0625)), 1.0f);    // tie: to even 1.0
  EXPECT_EQ(Float8ToFloat(kE4, Float8FromDouble(kE4, 1.1875)), 1.25f);   // tie: to even 1.25
  EXPECT_EQ(Float8ToFloat(kE4, Float8FromDouble(kE4, 1.07)), 1.125f);
  EXPECT_EQ(Float8ToFloat(kE5, Float8FromDouble(kE5, 1.125)), 1.0f);     // tie: to even 1.0
  EXPECT_EQ(Float8ToFloat(kE5, Float8FromDouble(kE5, 1.375)), 1.5f);     // tie: to even 1.5
  // Subnormal ties: half the smallest subnormal goes to zero, one and a half to two.
  EXPECT_EQ(Float8FromDouble(kE4, 0x1p-10), 0x00);
  EXPECT_EQ(Float8FromDouble(kE4, 0x1.8p-9), 0x02);
  // Rounding carries into the next binade: 1.9375 rounds to 2.0 in e4m3fn.
  EXPECT_EQ(Float8FromDouble(kE4, 1.9375), 0x40);
}

TEST(Float8Test, OverflowIsInfInE5m2AndNanInE4m3fn) {
  EXPECT_EQ(Float8FromDouble(kE4, 464.0), 0x7E);  // a tie to the even 448
  EXPECT_EQ(Float8FromDouble(kE4, 465.0), 0x7F);  // rounds past 448: NaN (no infinity)
  EXPECT_EQ(Float8FromDouble(kE4, -1e6), 0xFF);
  EXPECT_EQ(Float8FromDouble(kE4, INFINITY), 0x7F);
  EXPECT_EQ(Float8FromDouble(kE5, 61439.0), 0x7B);
  EXPECT_EQ(Float8FromDouble(kE5, 61440.0), 0x7C);  // a tie to the odd 57344 rounds up: inf
  EXPECT_EQ(Float8FromDouble(kE5, -INFINITY), 0xFC);
  EXPECT_EQ(Float8FromDouble(kE5, NAN), 0x7E);
  EXPECT_EQ(Float8FromDouble(kE4, -NAN), 0xFF);
}

}  // namespace
}  // namespace tpusim
