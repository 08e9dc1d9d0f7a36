// reduce-precision-expander (compiler/passes/reduce_precision_expander.h): reduce-precision on f32
// (bf16 / f16 through f32) becomes integer ops on the bits — round the mantissa to nearest even,
// overflow to infinity, flush below the reduced minimum, keep NaN (or make it infinity when M = 0)
// — bit for bit the evaluator's.
#include "compiler/passes/reduce_precision_expander.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// Random values spread over 2^-40 .. 2^40 (x * 2^(40 y), y in [-1, 1)), plus the special values,
// reduced to format (E, M) in `type`.
std::string Module(const std::string& type, int e, int m) {
  return R"(
HloModule rp
ENTRY e {
  x = f32[512] parameter(0)
  y = f32[512] parameter(1)
  k = f32[] constant(27.7258872)
  kb = f32[512] broadcast(k), dimensions={}
  ky = f32[512] multiply(y, kb)
  s = f32[512] exponential(ky)
  v = f32[512] multiply(x, s)
  special = f32[8] constant({inf, -inf, nan, 0, -0, 3.40282347e+38, 1.40129846e-45, -1.17549435e-38})
  all = f32[520] concatenate(v, special), dimensions={0}
  n = )" + type + R"([520] convert(all)
  ROOT r = )" + type + R"([520] reduce-precision(n), exponent_bits=)" + std::to_string(e) +
         ", mantissa_bits=" + std::to_string(m) + "\n}";
}

TEST(ReducePrecisionExpanderTest, F32FormatsBecomeBitOpsWithTheEvaluatorsBits) {
  // bf16, f16, e5m2, e4m3, e4m2 (below f16's subnormals), M = 0 (NaN -> infinity), E = 8 (no
  // exponent clamp), M = 23 (no rounding).
  for (const auto& [e, m] : {std::pair{8, 7}, {5, 10}, {5, 2}, {4, 3}, {4, 2}, {3, 0}, {8, 3},
                             {6, 23}}) {
    ReducePrecisionExpander pass;
    auto mod = testing::ExpectRewriteKeepsBits(pass, Module("f32", e, m));
    ASSERT_NE(mod, nullptr) << e << " " << m;
    EXPECT_EQ(testing::CountOpcode(*mod, HloOpcode::kReducePrecision), 0) << e << " " << m;
    EXPECT_GE(testing::CountOpcode(*mod, HloOpcode::kBitcastConvert), 2) << e << " " << m;
  }
}

TEST(ReducePrecisionExpanderTest, Bf16AndF16GoThroughF32) {
  for (const char* t : {"bf16", "f16"}) {
    ReducePrecisionExpander pass;
    auto mod = testing::ExpectRewriteKeepsBits(pass, Module(t, 4, 2));
    ASSERT_NE(mod, nullptr) << t;
    EXPECT_EQ(testing::CountOpcode(*mod, HloOpcode::kReducePrecision), 0) << t;
    const hlo::HloInstruction* root = mod->entry_computation()->root_instruction();
    EXPECT_EQ(root->opcode(), HloOpcode::kConvert) << t;
    EXPECT_EQ(root->shape().ToString(false), std::string(t) + "[520]");
  }
}

// Regression: f16 subnormals where the exponent is not reduced (E >= 5) round at f16's quantum
// 2^-24, as XLA rounds the f16 bits (2^-24 to M = 2 bits is 0, not 2^-24); the expansion rounded
// them at their f32 exponent. On the device too.
TEST(ReducePrecisionExpanderTest, F16SubnormalsRoundAtF16sQuantum) {
  for (const auto& [e, m] : {std::pair{5, 2}, {5, 0}, {5, 7}, {8, 3}}) {
    ReducePrecisionExpander pass;
    const std::string text = Module("f16", e, m);
    auto mod = testing::ExpectRewriteKeepsBits(pass, text);
    ASSERT_NE(mod, nullptr) << e << " " << m;
    EXPECT_EQ(testing::CountOpcode(*mod, HloOpcode::kRoundNearestEven), 1) << e << " " << m;
    testing::ExpectSameBits(text);
  }
}

TEST(ReducePrecisionExpanderTest, OtherElementTypesAreLeft) {
  ReducePrecisionExpander pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f64[8] parameter(0)
  ROOT r = f64[8] reduce-precision(x), exponent_bits=8, mantissa_bits=7
})");
}

}  // namespace
}  // namespace tpusim::compiler
