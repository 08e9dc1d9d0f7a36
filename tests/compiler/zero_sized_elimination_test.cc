// zero-sized-hlo-elimination (compiler/passes/zero_sized_elimination.h) and the arrays with no
// elements that reach the lowering through the newer expanders. Issue 21 round six: a broadcast to
// s32[4,0] (SIGFPE in the broadcast's gather kernel), a dot of batch 0 (SIGSEGV in its loads), an
// s32 dot of batch 0 through the integer-dot-expander and a ragged-dot of 0 groups; each now runs
// (nothing to compute) or is a located error, and the values agree with the evaluator.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compile.h"
#include "compiler/passes/zero_sized_elimination.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

TEST(ZeroSizedEliminationTest, EmptyResultsBecomeConstants) {
  auto m = testing::Parse(R"(HloModule z
ENTRY e {
  a = s32[] parameter(0)
  b = s32[4,0] broadcast(a), dimensions={}
  c = s32[4,0] add(b, b)
  k = f32[0] custom-call(), custom_call_target="tpu_custom_call"
  ROOT t = (s32[4,0], f32[0]) tuple(c, k)
}
)");
  ASSERT_NE(m, nullptr);
  auto changed = ZeroSizedHloElimination().Run(*m);
  ASSERT_TRUE(changed.ok() && *changed);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(0)->opcode(), hlo::HloOpcode::kConstant);
  EXPECT_EQ(root->operand(0)->name(), "c");
  EXPECT_EQ(root->operand(0)->shape().ToString(false), "s32[4,0]");
  // A custom-call is kept: a Pallas kernel's declared cost is its effect.
  EXPECT_EQ(root->operand(1)->opcode(), hlo::HloOpcode::kCustomCall);
  ASSERT_NE(m->entry_computation()->FindInstruction("b"), nullptr);
  EXPECT_EQ(m->entry_computation()->FindInstruction("b")->opcode(), hlo::HloOpcode::kConstant);
  EXPECT_FALSE(*ZeroSizedHloElimination().Run(*m));
}

TEST(ZeroSizedEliminationTest, EmptyArraysCompileAndRun) {
  for (const char* text : {R"(HloModule z
ENTRY e {
  a = s32[4,0] parameter(0)
  ROOT b = s32[4,0,3] broadcast(a), dimensions={0,1}
}
)",
                           R"(HloModule z
ENTRY e {
  a = f32[0,4,8] parameter(0)
  b = f32[0,8,4] parameter(1)
  ROOT d = f32[0,4,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
)",
                           R"(HloModule z
ENTRY e {
  a = s32[0,4,8] parameter(0)
  b = s32[0,8,4] parameter(1)
  d = s32[0,4,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  x = f32[8] parameter(2)
  ROOT t = (s32[0,4,4], f32[8]) tuple(d, x)
}
)"}) {
    testing::CheckAgainstEvaluator(text, "tpu-v4");
  }
}

TEST(ZeroSizedEliminationTest, RaggedDotOfNoGroupsIsALocatedError) {
  auto m = testing::Parse(R"(HloModule z
ENTRY e {
  x = f32[8,4] parameter(0)
  w = f32[0,4,5] parameter(1)
  g = s32[0] parameter(2)
  ROOT r = f32[8,5] ragged-dot(x, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}
)");
  ASSERT_NE(m, nullptr);
  auto r = Compile(*m, testing::Config("tpu-v4"), CompileOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("test.hlo:6:8: error: %r.dense.1 (dot): cannot lower: dot "
                                      "with an empty contracting dimension"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
