// common/float8.h: f8e4m3fn and f8e5m2 encodings and rounding, against values worked out from the
// formats' definitions (OCP FP8; ml_dtypes' float8_e4m3fn / float8_e5m2).
#include "common/float8.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

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

// Every line of tests/data/float8/minifloat_table.txt (ml_dtypes, by the script beside it; XLA:CPU
// agrees on every line, check_table_with_xla.py):
// the value of each of the 256 bit patterns of each of XLA's eight f8 formats, and the pattern
// ml_dtypes gives each of ~8000 f32 inputs (every value, every midpoint and its neighbours, values
// past the range, +-0, +-inf, NaN).
TEST(Float8Test, EveryFormatMatchesMlDtypesTable) {
  std::map<std::string, Float8Format> formats;
  for (int f = 0; f <= static_cast<int>(Float8Format::kE8M0FNU); ++f) {
    formats[Float8Name(static_cast<Float8Format>(f))] = static_cast<Float8Format>(f);
  }
  std::ifstream in("tests/data/float8/minifloat_table.txt");
  ASSERT_TRUE(in) << "run from the source directory (TPUSIM_SOURCE_DIR)";
  std::map<std::string, int> decodes, encodes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string kind, name, a, b;
    fields >> kind >> name >> a >> b;
    ASSERT_TRUE(formats.count(name)) << line;
    const Float8Format f = formats[name];
    if (kind == "d") {
      const float v = Float8ToFloat(f, static_cast<uint8_t>(std::stoul(a, nullptr, 16)));
      if (b == "nan") {
        EXPECT_TRUE(std::isnan(v)) << line;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(v), std::stoul(b, nullptr, 16)) << line << " got " << v;
      }
      ++decodes[name];
    } else {
      ASSERT_EQ(kind, "e") << line;
      const float x = std::bit_cast<float>(static_cast<uint32_t>(std::stoul(a, nullptr, 16)));
      EXPECT_EQ(Float8FromDouble(f, x), std::stoul(b, nullptr, 16)) << line << " (x = " << x << ")";
      ++encodes[name];
    }
  }
  ASSERT_EQ(decodes.size(), formats.size());
  for (const auto& [name, n] : decodes) EXPECT_EQ(n, 256) << name;
  for (const auto& [name, n] : encodes) EXPECT_GT(n, 500) << name;
}

TEST(Float8Test, LayoutsOfTheNewFormats) {
  EXPECT_EQ(Float8MaxFinite(Float8Format::kE4M3), 240.0);
  EXPECT_EQ(Float8MaxFinite(Float8Format::kE3M4), 15.5);
  EXPECT_EQ(Float8MaxFinite(Float8Format::kE4M3FNUZ), 240.0);
  EXPECT_EQ(Float8MaxFinite(Float8Format::kE5M2FNUZ), 57344.0);
  EXPECT_EQ(Float8MaxFinite(Float8Format::kE4M3B11FNUZ), 30.0);
  EXPECT_EQ(Float8MaxFinite(Float8Format::kE8M0FNU), 0x1p127);
  EXPECT_EQ(Float8HalfUlpOfMax(Float8Format::kE4M3FN), 16.0);
  EXPECT_EQ(Float8HalfUlpOfMax(Float8Format::kE5M2), 4096.0);
  // fnuz: one zero (-0 -> +0), 0x80 is the only NaN, overflow and inf are NaN.
  EXPECT_EQ(Float8FromDouble(Float8Format::kE4M3FNUZ, -0.0), 0x00);
  EXPECT_TRUE(std::isnan(Float8ToFloat(Float8Format::kE5M2FNUZ, 0x80)));
  EXPECT_EQ(Float8FromDouble(Float8Format::kE4M3B11FNUZ, INFINITY), 0x80);
  // f8e8m0fnu: powers of two only, no zero, no sign.
  EXPECT_EQ(Float8FromDouble(Float8Format::kE8M0FNU, 1.0), 0x7F);
  EXPECT_EQ(Float8FromDouble(Float8Format::kE8M0FNU, 0.0), 0xFF);
  EXPECT_EQ(Float8FromDouble(Float8Format::kE8M0FNU, -4.0), 0xFF);
  EXPECT_EQ(Float8FromDouble(Float8Format::kE8M0FNU, 1.5), 0x80);  // a tie goes away from zero
  EXPECT_EQ(Float8ToFloat(Float8Format::kE8M0FNU, 0x00), 0x1p-127f);
}

}  // namespace
}  // namespace tpusim
