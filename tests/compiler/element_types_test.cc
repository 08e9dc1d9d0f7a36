// Every integer and float element type the device holds, per op class, compiled and run on the
// interpreter and compared BIT FOR BIT with the evaluator (hlo/eval): elementwise arithmetic,
// compare/select, convert (int <-> float, one rounding), shifts, remainder, popcnt,
// count-leading-zeros, tan, cbrt, the inverse trigonometric and hyperbolic functions, mulhi,
// reduce, data movement (transpose, slice, pad, iota, concatenate, reverse), gather and dynamic-slice with indices of every index type. A large constant is added
// to every input so that the values leave the narrow range the random arguments have: an s64 add
// that overflows s32, a u32 compare of values >= 2^31, a u64 shift. The types the device cannot
// hold (c128, the f8 variants without a device type), the f64 ops the device does not compute
// (dots, convolutions) and the dots the MXU does not take are located errors naming the
// instruction and the type.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::Config;
using testing::ExpectSameBits;
using testing::Parse;

struct TypeCase {
  const char* type;
  const char* big;  // a constant near the top of the type's range
  bool integer;
};

const TypeCase kTypes[] = {
    {"s8", "100", true},         {"u8", "200", true},
    {"s16", "30000", true},      {"u16", "60000", true},
    {"s32", "2000000000", true}, {"u32", "4000000000", true},
    {"s64", "5000000000000", true}, {"u64", "17000000000000000000", true},
    {"f16", "1000", false},      {"bf16", "1000", false},
    {"f32", "1e30", false},
};

std::string Module(const TypeCase& c, const std::string& body, const std::string& extra = "") {
  const std::string t = c.type;
  return "HloModule m\n" + extra + "\nENTRY main {\n  a = " + t + "[8,128] parameter(0)\n  a1 = " +
         t + "[8,128] parameter(1)\n  c = " + t + "[] constant(" + c.big + ")\n  b = " + t +
         "[8,128] broadcast(c), dimensions={}\n  s = " + t + "[8,128] add(a, b)\n" + body + "}\n";
}

std::string Sub(std::string text, const std::string& t) {
  for (size_t p = text.find("$T"); p != std::string::npos; p = text.find("$T", p)) {
    text.replace(p, 2, t);
  }
  return text;
}

class ElementTypeTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(ElementTypeTest, ElementwiseArithmetic) {
  const TypeCase& c = GetParam();
  ExpectSameBits(Module(c, Sub(R"(  m = $T[8,128] multiply(s, s)
  d = $T[8,128] divide(m, a1)
  r1 = $T[8,128] subtract(d, s)
  n = $T[8,128] negate(r1)
  ab = $T[8,128] abs(n)
  mx = $T[8,128] maximum(n, a)
  ROOT r = ($T[8,128], $T[8,128]) tuple(mx, ab)
)",
                                    c.type)));
}

TEST_P(ElementTypeTest, CompareAndSelect) {
  const TypeCase& c = GetParam();
  ExpectSameBits(Module(c, Sub(R"(  lt = pred[8,128] compare(s, b), direction=LT
  ge = pred[8,128] compare(s, a1), direction=GE
  x = $T[8,128] select(lt, s, a)
  mn = $T[8,128] minimum(x, s)
  ROOT r = ($T[8,128], pred[8,128]) tuple(mn, ge)
)",
                                    c.type)));
}

TEST_P(ElementTypeTest, ConvertToAndFromFloatsRoundsOnce) {
  const TypeCase& c = GetParam();
  ExpectSameBits(Module(c, Sub(R"(  f = f32[8,128] convert(s)
  g = f32[8,128] multiply(f, f)
  h = $T[8,128] convert(g)
  k = bf16[8,128] convert(s)
  e = f16[8,128] convert(s)
  i = s32[8,128] convert(s)
  u = u64[8,128] convert(s)
  p = pred[8,128] convert(s)
  ROOT r = ($T[8,128], bf16[8,128], f16[8,128], s32[8,128], u64[8,128], pred[8,128]) tuple(h, k, e, i, u, p)
)",
                                    c.type)));
}

TEST_P(ElementTypeTest, ReduceSumAndMax) {
  const TypeCase& c = GetParam();
  const std::string comps = Sub(R"(add {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT z = $T[] add(x, y)
}
max {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT z = $T[] maximum(x, y)
}
)",
                                c.type);
  ExpectSameBits(Module(c, Sub(R"(  z = $T[] constant(0)
  r1 = $T[8] reduce(s, z), dimensions={1}, to_apply=add
  r0 = $T[128] reduce(s, z), dimensions={0}, to_apply=max
  ROOT r = ($T[8], $T[128]) tuple(r1, r0)
)",
                                    c.type),
                        comps));
}

TEST_P(ElementTypeTest, DataMovement) {
  const TypeCase& c = GetParam();
  ExpectSameBits(Module(c, Sub(R"(  tr = $T[128,8] transpose(s), dimensions={1,0}
  sl = $T[64,8] slice(tr), slice={[3:67], [0:8]}
  z = $T[] constant(0)
  pd = $T[70,8] pad(sl, z), padding=3_3x0_0
  io = $T[70,8] iota(), iota_dimension=0
  cc = $T[140,8] concatenate(pd, io), dimensions={0}
  rv = $T[140,8] reverse(cc), dimensions={0,1}
  ROOT r = ($T[140,8], $T[140,8]) tuple(cc, rv)
)",
                                    c.type)));
}

TEST_P(ElementTypeTest, ShiftsAndBitwiseOpsActOnTheTypesOwnBits) {
  const TypeCase& c = GetParam();
  if (!c.integer) GTEST_SKIP() << "integers only";
  ExpectSameBits(Module(c, Sub(R"(  sh = $T[8,128] shift-right-logical(s, a)
  sa = $T[8,128] shift-right-arithmetic(s, a)
  sl = $T[8,128] shift-left(s, a1)
  x = $T[8,128] xor(sh, sa)
  o = $T[8,128] or(x, sl)
  n = $T[8,128] not(o)
  rm = $T[8,128] remainder(s, a1)
  pc = $T[8,128] popcnt(s)
  lz = $T[8,128] count-leading-zeros(a)
  ROOT r = ($T[8,128], $T[8,128], $T[8,128], $T[8,128]) tuple(n, rm, pc, lz)
)",
                                    c.type)));
}

TEST_P(ElementTypeTest, TanAndCbrt) {
  const TypeCase& c = GetParam();
  if (c.integer) GTEST_SKIP() << "floats only";
  ExpectSameBits(Module(c, Sub(R"(  t = $T[8,128] tan(a)
  n = $T[8,128] negate(s)
  cb = $T[8,128] cbrt(n)
  ROOT r = ($T[8,128], $T[8,128]) tuple(t, cb)
)",
                                    c.type)));
}

// tanh keeps the operands of acos, asin and atanh inside [-1, 1] and cosh those of acosh at >= 1, so
// the values compared are numbers, not NaNs.
TEST_P(ElementTypeTest, InverseTrigonometricAndHyperbolicFunctions) {
  const TypeCase& c = GetParam();
  if (c.integer) GTEST_SKIP() << "floats only";
  ExpectSameBits(Module(c, Sub(R"(  u = $T[8,128] tanh(a)
  ch = $T[8,128] cosh(a)
  sh = $T[8,128] sinh(a1)
  ac = $T[8,128] acos(u)
  as = $T[8,128] asin(u)
  at = $T[8,128] atan(s)
  ath = $T[8,128] atanh(u)
  ach = $T[8,128] acosh(ch)
  ash = $T[8,128] asinh(s)
  ROOT r = ($T[8,128], $T[8,128], $T[8,128], $T[8,128], $T[8,128], $T[8,128], $T[8,128], $T[8,128]) tuple(sh, ac, as, at, ath, ach, ash, ch)
)",
                                    c.type)));
}

// The high half of the double-width product, for every integer type (signed and unsigned, 8 to 64
// bits), with operands near the top of the type's range.
TEST_P(ElementTypeTest, MulhiHighHalf) {
  const TypeCase& c = GetParam();
  if (!c.integer) GTEST_SKIP() << "integers only";
  ExpectSameBits(Module(c, Sub(R"(  h = $T[8,128] mulhi(s, a1)
  n = $T[8,128] negate(s)
  hn = $T[8,128] mulhi(n, s)
  ROOT r = ($T[8,128], $T[8,128]) tuple(h, hn)
)",
                                    c.type)));
}

INSTANTIATE_TEST_SUITE_P(Types, ElementTypeTest, ::testing::ValuesIn(kTypes),
                         [](const ::testing::TestParamInfo<TypeCase>& i) {
                           return std::string(i.param.type);
                         });

// Gather and dynamic-slice take indices of any integer type; values beyond the s32 range (an s64
// index of 2^32 + 1, a u32 index of 3e9) clamp as the evaluator clamps them, not wrapped.
class IndexTypeTest : public ::testing::TestWithParam<const char*> {};

TEST_P(IndexTypeTest, GatherAndDynamicSliceClampWideIndices) {
  const std::string t = GetParam();
  const bool wide = t == "u32" || t == "s64" || t == "u64";
  const std::string big = wide ? (t == "u32" ? "3000000000" : "4294967297") : "100";
  ExpectSameBits(Sub(R"(HloModule m
ENTRY main {
  tb = f32[50,128] parameter(0)
  i = $T[16] parameter(1)
  c = $T[] constant()" + big + R"()
  bb = $T[16] broadcast(c), dimensions={}
  j = $T[16] add(i, bb)
  jj = $T[16,1] reshape(j)
  g = f32[16,128] gather(tb, jj), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
  g2 = f32[16,128] gather(tb, jj), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
  k = $T[1] slice(i), slice={[3:4]}
  ks = $T[] reshape(k)
  z = $T[] constant(0)
  ds = f32[4,128] dynamic-slice(tb, ks, z), dynamic_slice_sizes={4,128}
  ROOT r = (f32[16,128], f32[4,128]) tuple(g, ds)
}
)",
                     t));
}

INSTANTIATE_TEST_SUITE_P(Types, IndexTypeTest,
                         ::testing::Values("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"));

// The element types the device does not hold, and the dots the MXU does not take: a located error
// naming the instruction and the type.
TEST(ElementTypeErrorTest, TypesWithoutADeviceTypeNameTheInstructionAndTheType) {
  for (const char* t : {"c128"}) {
    auto m = Parse(std::string("HloModule m\nENTRY e {\n  a = ") + t +
                   "[8] parameter(0)\n  ROOT r = " + t + "[8] negate(a)\n}\n");
    ASSERT_NE(m, nullptr) << t;
    auto c = Compile(*m, Config("tiny"), {});
    ASSERT_FALSE(c.ok()) << t;
    const std::string& msg = c.status().message();
    EXPECT_NE(msg.find("%a (parameter)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("element type ") + t + ":"), std::string::npos) << msg;
  }
}

TEST(ElementTypeErrorTest, DotsTheMxuDoesNotTakeNameTheTypes) {
  // (f16 runs: float8-dot-upcast computes it in f32, Float8DotUpcastOtherTypesTest; 8- to 32-bit
  // integers run as s8 digits on the MXU, IntegerDotExpanderTest.)
  for (const char* t : {"s64", "u64"}) {
    auto m = Parse(std::string("HloModule m\nENTRY e {\n  a = ") + t + "[8,128] parameter(0)\n" +
                   "  ROOT d = " + t + "[8,8] dot(a, a), lhs_contracting_dims={1}, " +
                   "rhs_contracting_dims={1}\n}\n");
    ASSERT_NE(m, nullptr) << t;
    auto c = Compile(*m, Config("tiny"), {});
    ASSERT_FALSE(c.ok()) << t;
    EXPECT_NE(c.status().message().find(std::string("%d (dot): cannot lower: dot of ") + t + " x " +
                                        t),
              std::string::npos)
        << c.status().message();
  }
}

// f64: converts round once (f64 -> f32/bf16/f16 as XLA's convert) and the VPU's elementwise
// arithmetic, compare, select, clamp and reduce compute in binary64, bit for bit the evaluator's
// (XLA's TPU backend emulates f64 with f32 pairs; tpusim models their cost, not their
// precision); what the device does not compute on f64 (a dot, a convolution) is a located error
// naming the op.
TEST(ElementTypeF64Test, ConvertsMatchTheEvaluatorBitForBit) {
  testing::ExpectSameBits(R"(HloModule m
ENTRY e {
  a = f64[8,128] parameter(0)
  b = bf16[8,128] parameter(1)
  i = s64[8,128] parameter(2)
  c = f64[] constant(0.1)
  af = f32[8,128] convert(a)
  cf = f32[] convert(c)
  cb = f32[8,128] broadcast(cf), dimensions={}
  m = f32[8,128] multiply(af, cb)
  m64 = f64[8,128] convert(m)
  b64 = f64[8,128] convert(b)
  big = f64[] constant(3e9)
  bigb = f64[8,128] broadcast(big), dimensions={}
  scaled = f64[8,128] multiply(a, bigb)
  s = s32[8,128] convert(scaled)
  l = s64[8,128] convert(scaled)
  h = f16[8,128] convert(a)
  bb = bf16[8,128] convert(a)
  p = pred[8,128] convert(a)
  i64 = f64[8,128] convert(i)
  ROOT t = (f32[8,128], f64[8,128], f64[8,128], f64[8,128], s32[8,128], s64[8,128], f16[8,128],
            bf16[8,128], pred[8,128], f64[8,128]) tuple(m, m64, b64, a, s, l, h, bb, p, i64)
})");
}

TEST(ElementTypeF64Test, ArithmeticMatchesTheEvaluatorBitForBit) {
  // Values past f32's range and precision: 1e300 x, x + 1e-12, exp/log/tanh/pow/atan2 at f64.
  testing::ExpectSameBits(R"(HloModule m
add64 {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT s = f64[] add(x, y)
}
max64 {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT s = f64[] maximum(x, y)
}
ENTRY e {
  a = f64[16,256] parameter(0)
  b = f64[16,256] parameter(1)
  huge = f64[] constant(1e300)
  tiny = f64[] constant(1e-12)
  hb = f64[16,256] broadcast(huge), dimensions={}
  tb = f64[16,256] broadcast(tiny), dimensions={}
  scaled = f64[16,256] multiply(a, hb)
  nudged = f64[16,256] add(a, tb)
  q = f64[16,256] divide(a, b)
  e = f64[16,256] exponential(a)
  l = f64[16,256] log(e)
  th = f64[16,256] tanh(b)
  ab = f64[16,256] abs(a)
  pw = f64[16,256] power(ab, b)
  at = f64[16,256] atan2(a, b)
  mx = f64[16,256] maximum(a, b)
  lt = pred[16,256] compare(a, b), direction=LT
  sel = f64[16,256] select(lt, nudged, scaled)
  lo = f64[] constant(-0.5)
  hi = f64[] constant(0.25)
  cl = f64[16,256] clamp(lo, a, hi)
  fin = pred[16,256] is-finite(scaled)
  z = f64[] constant(0)
  rows = f64[16] reduce(scaled, z), dimensions={1}, to_apply=add64
  cols = f64[256] reduce(q, z), dimensions={0}, to_apply=add64
  ninf = f64[] constant(-inf)
  m = f64[] reduce(nudged, ninf), dimensions={0,1}, to_apply=max64
  ROOT t = (f64[16,256], f64[16,256], f64[16,256], f64[16,256], f64[16,256], f64[16,256],
            f64[16,256], f64[16,256], f64[16], f64[256], f64[], pred[16,256]) tuple(sel, q, l, th,
            pw, at, mx, cl, rows, cols, m, fin)
})");
}

// x[idx] of an f64 table (JAX's indexing in x64 mode): the indices in s32, the rows by DMA.
TEST(ElementTypeF64Test, GatherOfF64RowsMatchesTheEvaluator) {
  testing::ExpectSameBits(R"(HloModule m
ENTRY e {
  table = f64[64,128] parameter(0)
  idx = s32[16,1] parameter(1)
  ROOT g = f64[16,128] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
})");
}

TEST(ElementTypeF64Test, AnF64OpTheDeviceDoesNotComputeNamesTheOp) {
  const char* cases[][2] = {
      {"f64[8,8] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "dot"},
      {"f64[8,8] convolution(a, a), window={size=1}, dim_labels=bf_io->bf", "convolution"}};
  for (const auto& [op, name] : cases) {
    auto m = Parse(std::string("HloModule m\nENTRY e {\n  a = f64[8,8] parameter(0)\n"
                               "  ROOT r = ") + op + "\n}\n");
    ASSERT_NE(m, nullptr) << op;
    auto c = Compile(*m, Config("tiny"), {});
    ASSERT_FALSE(c.ok()) << op;
    const std::string& msg = c.status().message();
    EXPECT_NE(msg.find(std::string("%r (") + name + "): cannot lower: element type f64"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace tpusim::compiler
