// integer-dot-expander (issue 16): integer dots with operands wider than 8 bits run as s8 x s8 ->
// s32 MXU dots of signed 8-bit digits, wrapping modulo 2^32 as XLA's integer dot does; a dot of an
// integer and a floating-point operand converts the integer one (compiler/passes/
// integer_dot_expander.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "compiler/passes/integer_dot_expander.h"
#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

std::string DotModule(const std::string& a, const std::string& b, const std::string& r,
                      const std::string& lhs = "parameter(0)",
                      const std::string& rhs = "parameter(1)") {
  return fmt::format(R"(HloModule d
ENTRY e {{
  a = {0}[2,4,8] {3}
  b = {1}[2,8,3] {4}
  ROOT d = {2}[2,4,3] dot(a, b), lhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_batch_dims={{0}}, rhs_contracting_dims={{1}}
}}
)",
                     a, b, r, lhs, rhs);
}

// Every operand type the split takes, with an s32 or u32 result: the evaluator's bits before and
// after, and only s8 dots left.
TEST(IntegerDotExpanderTest, DigitsKeepTheBits) {
  for (const auto& [a, b, r] :
       {std::make_tuple("s32", "s32", "s32"), std::make_tuple("u8", "s16", "s32"),
        std::make_tuple("u16", "s32", "u32"), std::make_tuple("u32", "u32", "u32"),
        std::make_tuple("s8", "s4", "u32"), std::make_tuple("s8", "s32", "s32"),
        std::make_tuple("u8", "s16", "s16"), std::make_tuple("s8", "s8", "s8"),
        std::make_tuple("u16", "u8", "u16"), std::make_tuple("s32", "u8", "u8")}) {
    SCOPED_TRACE(fmt::format("{} x {} -> {}", a, b, r));
    IntegerDotExpander pass;
    auto m = testing::ExpectRewriteKeepsBits(pass, DotModule(a, b, r));
    ASSERT_NE(m, nullptr);
    for (const auto& inst : m->entry_computation()->instructions()) {
      if (inst->opcode() != hlo::HloOpcode::kDot) continue;
      EXPECT_EQ(inst->operand(0)->shape().element_type(), hlo::PrimitiveType::kS8);
      EXPECT_EQ(inst->operand(1)->shape().element_type(), hlo::PrimitiveType::kS8);
    }
  }
  // s32 x s32: the 10 digit pairs (i + j <= 3) of 4 digits each.
  auto m = testing::Parse(DotModule("s32", "s32", "s32"));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(IntegerDotExpander().Run(*m).ok());
  EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kDot), 10);
}

// Values at the ends of s32's range wrap modulo 2^32, as XLA's dot does: 2^31-1 squared 8 times,
// -2^31 times 3, and by hand the sum (2^31 - 1) * 2 + 5 * 7 wrapping to 33.
TEST(IntegerDotExpanderTest, WrapsModulo2To32) {
  const std::string text = R"(HloModule d
ENTRY e {
  a = s32[2,3] constant({{2147483647, 5, 0}, {-2147483648, -7, 123456789}})
  b = s32[3,2] constant({{2, 2147483647}, {7, -1}, {3, -98765}})
  ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  IntegerDotExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->GetAsDouble(0), 33);  // 2^32 - 2 + 35 wraps to 33
  testing::CheckAgainstEvaluator(text, "tpu-v4", 0, 0);  // and the device wraps alike
}

// A float x integer dot converts the integer operand to the result type.
TEST(IntegerDotExpanderTest, MixedOperandsAreUpcast) {
  IntegerDotExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, DotModule("f32", "s32", "f32"));
  ASSERT_NE(m, nullptr);
  for (const auto& inst : m->entry_computation()->instructions()) {
    if (inst->opcode() != hlo::HloOpcode::kDot) continue;
    EXPECT_EQ(inst->operand(1)->shape().element_type(), hlo::PrimitiveType::kF32);
  }
  testing::ExpectUnchanged(pass, DotModule("s8", "s8", "s32"));
  testing::ExpectUnchanged(pass, DotModule("f32", "f32", "f32"));
}

// The device runs them (the MXU's s8 path, wrapping s32 adds and shifts on the VPU), bit-exact.
TEST(IntegerDotExpanderTest, DeviceRunsThem) {
  testing::CheckAgainstEvaluator(DotModule("s32", "s32", "s32"), "tpu-v4", 0, 0);
  testing::CheckAgainstEvaluator(DotModule("u16", "s32", "u32"), "tiny", 0, 0);
  testing::CheckAgainstEvaluator(DotModule("u8", "s16", "s16"), "tpu-v4", 0, 0);
  testing::CheckAgainstEvaluator(DotModule("s32", "f32", "f32"), "tpu-v4", 1e-5, 1e-5);
}

}  // namespace
}  // namespace tpusim::compiler
