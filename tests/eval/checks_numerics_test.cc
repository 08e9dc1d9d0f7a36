// The evaluator's reference numerics that `tpusim run` checks simulations against: f32
// accumulation of bf16 sums, the MXU's summation order for dots, and elided constants that do not
// depend on the seed (evaluator.h EvaluatorOptions).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;

constexpr const char* kBf16Sum = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[4096] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})";

Literal Bf16Fill(int64_t n, float v) {
  auto lit = Literal::Create(Shape(PrimitiveType::kBF16, {n}));
  EXPECT_TRUE(lit.ok());
  for (int64_t i = 0; i < n; ++i) lit->SetFromDouble(i, v);
  return std::move(lit).value();
}

TEST(EvalChecksNumericsTest, Bf16SumAccumulatesInF32AndRoundsOnce) {
  // 4096 x 0.1 (bf16 0.10009765625): f32 sum 409.99... -> bf16 410.
  Literal r = EvalHlo(kBf16Sum, {Bf16Fill(4096, 0.1f)});
  EXPECT_EQ(r.GetAsDouble(0), 410.0);
}

TEST(EvalChecksNumericsTest, Bf16SumWithSwappedAddOperandsAccumulatesInF32Too) {
  // add(b, a) is add(a, b) (XLA's GPU tests write reducers so): the same f32 accumulation, in the
  // reduce and in a bf16 all-reduce, where the device sums in f32 and rounds once.
  std::string swapped = kBf16Sum;
  swapped.replace(swapped.find("add(a, b)"), 9, "add(b, a)");
  Literal r = EvalHlo(swapped, {Bf16Fill(4096, 0.1f)});
  EXPECT_EQ(r.GetAsDouble(0), 410.0);
}

TEST(EvalChecksNumericsTest, Bf16SumRoundsEveryStepWhenAskedTo) {
  // A bf16 accumulator stops at 32, where the bf16 spacing (0.25) swamps 0.1.
  EvaluatorOptions o;
  o.f32_accumulation = false;
  Literal r = EvalHlo(kBf16Sum, {Bf16Fill(4096, 0.1f)}, o);
  EXPECT_EQ(r.GetAsDouble(0), 32.0);
}

TEST(EvalChecksNumericsTest, Bf16AllReduceRoundsOnce) {
  // 256 + 1 + 1 + 0: per step 257 rounds to 256 (ties to even) twice; in f32 258.
  const char* text = R"(
HloModule m, replica_count=4
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[2] parameter(0)
  ROOT r = bf16[2] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add
})";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<std::vector<Literal>> args;
  for (float v : {256.0f, 1.0f, 1.0f, 0.0f}) args.push_back({Bf16Fill(2, v)});
  for (bool f32 : {true, false}) {
    EvaluatorOptions o;
    o.f32_accumulation = f32;
    Evaluator ev(o);
    auto r = ev.EvaluateReplicated(**module, 4, 1, args);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (const Literal& d : *r) EXPECT_EQ(d.GetAsDouble(1), f32 ? 258.0 : 256.0);
  }
}

TEST(EvalChecksNumericsTest, DotSumsInTheMxuOrder) {
  // x = [256, 2^-17 x 255] . ones: in k order every 2^-17 is swamped by 256 (half an f32 ulp is
  // 2^-16), so one 256-row tile gives 256; in 128-row tiles the second tile sums 128 x 2^-17 =
  // 2^-10 exactly before it meets 256: 256 + 2^-10.
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[1,256] parameter(0)
  w = f32[256,1] parameter(1)
  ROOT d = f32[1,1] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  auto x = Literal::Create(Shape(PrimitiveType::kF32, {1, 256}));
  auto w = Literal::Create(Shape(PrimitiveType::kF32, {256, 1}));
  ASSERT_TRUE(x.ok() && w.ok());
  for (int64_t k = 0; k < 256; ++k) {
    x->SetFromDouble(k, k == 0 ? 256.0 : std::ldexp(1.0, -17));
    w->SetFromDouble(k, 1.0);
  }
  for (int64_t rows : {128, 256}) {
    EvaluatorOptions o;
    o.tpu_default_precision = true;
    o.mxu_rows = rows;
    Literal r = EvalHlo(text, {*x, *w}, o);
    EXPECT_EQ(r.GetAsDouble(0), rows == 128 ? 256.0 + std::ldexp(1.0, -10) : 256.0) << rows;
  }
}

TEST(EvalChecksNumericsTest, ElidedConstantsDoNotDependOnTheSeed) {
  const char* text = R"(
HloModule m
ENTRY e {
  ROOT c = bf16[64] constant({...})
})";
  EvaluatorOptions a, b;
  a.seed = 0;
  b.seed = 42;
  Literal ra = EvalHlo(text, {}, a), rb = EvalHlo(text, {}, b);
  EXPECT_TRUE(ra.BitwiseEqual(rb));
  auto want = Literal::Create(Shape(PrimitiveType::kBF16, {64}));
  ASSERT_TRUE(want.ok());
  FillRandom(*want, kElidedConstantSeed, "c");
  EXPECT_TRUE(ra.BitwiseEqual(*want));
}

}  // namespace
}  // namespace tpusim::hlo
