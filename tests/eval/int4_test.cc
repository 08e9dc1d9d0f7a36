// The evaluator's s4 and u4 (hlo/eval/int4.h) over all 16 values: converts (integers wrap to the
// low 4 bits, floats saturate, NaN -> 0, as XLA's convert) and every elementwise op over all
// 16 x 16 operand pairs, against an independent definition of 4-bit two's-complement arithmetic
// written here from XLA's operation semantics (the rules in hlo/eval/kernels/elementwise_ops.h).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <string>

#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;
using testing::Values;

// Value of the 4-bit pattern `bits` (0..15) in s4 (signed) or u4.
int FromBits(int bits, bool is_signed) { return is_signed && bits >= 8 ? bits - 16 : bits; }
int Wrap(int64_t v, bool is_signed) { return FromBits(static_cast<int>(v & 0xF), is_signed); }

// "{v0, v1, ...}" for a constant.
std::string List(const std::vector<int>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

class EvalInt4Test : public ::testing::TestWithParam<const char*> {
 protected:
  bool Signed() const { return std::string(GetParam()) == "s4"; }
  std::vector<int> All() const {
    std::vector<int> v;
    for (int b = 0; b < 16; ++b) v.push_back(FromBits(b, Signed()));
    return v;
  }
};

TEST_P(EvalInt4Test, ConvertsOfAll16ValuesAsXla) {
  const std::string T = GetParam();
  const Literal r = EvalHlo("HloModule m\nENTRY e {\n  c = " + T + "[16] constant(" + List(All()) +
                            ")\n  a = s32[16] convert(c)\n  b = u8[16] convert(c)\n" +
                            "  f = f32[16] convert(c)\n  h = bf16[16] convert(c)\n" +
                            "  p = pred[16] convert(c)\n" +
                            "  ROOT t = (s32[16], u8[16], f32[16], bf16[16], pred[16]) " +
                            "tuple(a, b, f, h, p)\n}\n");
  for (int i = 0; i < 16; ++i) {
    const int v = All()[static_cast<size_t>(i)];
    EXPECT_EQ(Values(r.element(0))[i], v);
    EXPECT_EQ(Values(r.element(1))[i], v < 0 ? v + 256 : v) << "sign-extends, then wraps";
    EXPECT_EQ(Values(r.element(2))[i], v);
    EXPECT_EQ(Values(r.element(3))[i], v);
    EXPECT_EQ(Values(r.element(4))[i], v != 0 ? 1 : 0);
  }
}

TEST_P(EvalInt4Test, IntegersWrapAndFloatsSaturateWhenConvertedTo4Bits) {
  const std::string T = GetParam();
  std::vector<int> ints;
  for (int v = -40; v <= 40; ++v) ints.push_back(v);
  const std::vector<float> floats = {-9.5f, -8.7f, -0.9f, 0.9f, 6.99f, 7.9f, 8.0f, 15.5f, 16.0f,
                                     1e30f, -1e30f, NAN, INFINITY, -INFINITY};
  std::string fl = "{";
  for (size_t i = 0; i < floats.size(); ++i) {
    fl += (i ? ", " : "") + (std::isnan(floats[i]) ? std::string("nan")
                             : std::isinf(floats[i])
                                 ? std::string(floats[i] > 0 ? "inf" : "-inf")
                                 : fmt::format("{}", floats[i]));
  }
  fl += "}";
  const std::string nf = std::to_string(floats.size());
  const Literal r = EvalHlo("HloModule m\nENTRY e {\n  i = s32[81] constant(" + List(ints) +
                            ")\n  f = f32[" + nf + "] constant(" + fl + ")\n  a = " + T +
                            "[81] convert(i)\n  b = " + T + "[" + nf + "] convert(f)\n" +
                            "  ROOT t = (" + T + "[81], " + T + "[" + nf + "]) tuple(a, b)\n}\n");
  for (size_t i = 0; i < ints.size(); ++i) {
    EXPECT_EQ(Values(r.element(0))[i], Wrap(ints[i], Signed())) << ints[i];
  }
  const int lo = Signed() ? -8 : 0, hi = Signed() ? 7 : 15;
  for (size_t i = 0; i < floats.size(); ++i) {
    const double want =
        std::isnan(floats[i]) ? 0 : std::clamp(std::trunc(double{floats[i]}), double(lo), double(hi));
    EXPECT_EQ(Values(r.element(1))[i], want) << floats[i];
  }
}

// Every binary op over the 256 pairs (a, b), and compares, against 4-bit definitions.
TEST_P(EvalInt4Test, BinaryOpsOverAllPairsWrapTo4Bits) {
  const std::string T = GetParam();
  const bool s = Signed();
  std::vector<int> a, b;
  for (int i = 0; i < 256; ++i) {
    a.push_back(All()[static_cast<size_t>(i / 16)]);
    b.push_back(All()[static_cast<size_t>(i % 16)]);
  }
  const int min = s ? -8 : 0, all_ones = s ? -1 : 15;
  const std::vector<std::pair<std::string, std::function<int(int, int)>>> ops = {
      {"add", [&](int x, int y) { return Wrap(x + y, s); }},
      {"subtract", [&](int x, int y) { return Wrap(x - y, s); }},
      {"multiply", [&](int x, int y) { return Wrap(x * y, s); }},
      {"divide",
       [&](int x, int y) { return y == 0 ? all_ones : (s && x == min && y == -1) ? x : x / y; }},
      {"remainder",
       [&](int x, int y) { return y == 0 ? x : (s && x == min && y == -1) ? 0 : x % y; }},
      {"maximum", [](int x, int y) { return std::max(x, y); }},
      {"minimum", [](int x, int y) { return std::min(x, y); }},
      {"and", [&](int x, int y) { return FromBits((x & 0xF) & (y & 0xF), s); }},
      {"or", [&](int x, int y) { return FromBits((x & 0xF) | (y & 0xF), s); }},
      {"xor", [&](int x, int y) { return FromBits((x & 0xF) ^ (y & 0xF), s); }},
      {"shift-left",
       [&](int x, int y) { return (y & 0xF) >= 4 ? 0 : Wrap((x & 0xF) << (y & 0xF), s); }},
      {"shift-right-logical",
       [&](int x, int y) { return (y & 0xF) >= 4 ? 0 : FromBits((x & 0xF) >> (y & 0xF), s); }},
      {"shift-right-arithmetic", [&](int x, int y) {
         const int sx = FromBits(x & 0xF, true);  // bit 3 is the sign, whatever the type
         const int r = (y & 0xF) >= 4 ? (sx < 0 ? -1 : 0) : sx >> (y & 0xF);
         return Wrap(r, s);
       }}};
  for (const auto& [name, fn] : ops) {
    const Literal r = EvalHlo("HloModule m\nENTRY e {\n  a = " + T + "[256] constant(" + List(a) +
                              ")\n  b = " + T + "[256] constant(" + List(b) + ")\n  ROOT r = " +
                              T + "[256] " + name + "(a, b)\n}\n");
    const std::vector<double> got = Values(r);
    for (size_t i = 0; i < 256; ++i) {
      ASSERT_EQ(got[i], fn(a[i], b[i])) << name << "(" << a[i] << ", " << b[i] << ")";
    }
  }
  const Literal c = EvalHlo("HloModule m\nENTRY e {\n  a = " + T + "[256] constant(" + List(a) +
                            ")\n  b = " + T + "[256] constant(" + List(b) + ")\n" +
                            "  lt = pred[256] compare(a, b), direction=LT\n" +
                            "  ult = pred[256] compare(a, b), direction=LT, type=UNSIGNED\n" +
                            "  ROOT t = (pred[256], pred[256]) tuple(lt, ult)\n}\n");
  for (size_t i = 0; i < 256; ++i) {
    EXPECT_EQ(Values(c.element(0))[i], a[i] < b[i] ? 1 : 0);
    EXPECT_EQ(Values(c.element(1))[i], (a[i] & 0xF) < (b[i] & 0xF) ? 1 : 0);
  }
}

TEST_P(EvalInt4Test, UnaryOpsOfAll16ValuesWrapTo4Bits) {
  const std::string T = GetParam();
  const bool s = Signed();
  const Literal r = EvalHlo("HloModule m\nENTRY e {\n  c = " + T + "[16] constant(" + List(All()) +
                            ")\n  n = " + T + "[16] negate(c)\n  a = " + T + "[16] abs(c)\n" +
                            "  x = " + T + "[16] not(c)\n  p = " + T + "[16] popcnt(c)\n" +
                            "  z = " + T + "[16] count-leading-zeros(c)\n  g = " + T +
                            "[16] sign(c)\n  ROOT t = (" + T + "[16], " + T + "[16], " + T +
                            "[16], " + T + "[16], " + T + "[16], " + T +
                            "[16]) tuple(n, a, x, p, z, g)\n}\n");
  for (int i = 0; i < 16; ++i) {
    const int v = All()[static_cast<size_t>(i)];
    const unsigned bits = static_cast<unsigned>(v) & 0xFu;
    EXPECT_EQ(Values(r.element(0))[i], Wrap(-v, s)) << v;
    EXPECT_EQ(Values(r.element(1))[i], Wrap(v < 0 ? -v : v, s)) << v;  // abs(-8) wraps to -8
    EXPECT_EQ(Values(r.element(2))[i], FromBits(static_cast<int>(~bits & 0xFu), s)) << v;
    EXPECT_EQ(Values(r.element(3))[i], std::popcount(bits)) << v;
    EXPECT_EQ(Values(r.element(4))[i], std::countl_zero(bits) - 28) << v;
    EXPECT_EQ(Values(r.element(5))[i], v > 0 ? 1 : (v < 0 ? -1 : 0)) << v;
  }
}

TEST_P(EvalInt4Test, ConstantsOutsideTheRangeAreRejected) {
  const std::string T = GetParam();
  const std::string bad = Signed() ? "8" : "16";
  EXPECT_FALSE(testing::EvalHloStatus("HloModule m\nENTRY e {\n  ROOT c = " + T +
                                      "[2] constant({1, " + bad + "})\n}\n")
                   .ok());
}

INSTANTIATE_TEST_SUITE_P(Types, EvalInt4Test, ::testing::Values("s4", "u4"));

}  // namespace
}  // namespace tpusim::hlo
