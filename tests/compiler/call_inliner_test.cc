// call-inliner (compiler/passes/call_inliner.h): every call and fusion of the entry computation is
// replaced by a copy of its callee (nested ones too), and every conditional is if-converted into
// all branches plus selects; values unchanged (the evaluator's bits before and after).
#include "compiler/passes/call_inliner.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/pass_test_util.h"
#include "tests/compiler/shared_test_modules.h"

namespace tpusim::compiler {
namespace {

using testing::kPredConditional;

using hlo::HloOpcode;

// A call whose callee calls another computation, and a fusion; both name an instruction `m`.
constexpr char kCalls[] = R"(
HloModule m
inner {
  a = f32[8] parameter(0)
  ROOT m = f32[8] multiply(a, a)
}
outer {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] call(a), to_apply=inner
  ROOT s = f32[8] add(c, b)
}
fused {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT m = f32[8] subtract(p0, p1)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  o = f32[8] call(x, y), to_apply=outer
  ROOT f = f32[8] fusion(o, y), kind=kLoop, calls=fused
})";

// An s32 branch index: `k` in range picks branch k, out of range the last branch.
std::string IndexConditional(int k) {
  return R"(
HloModule cond_index
b0 {
  x = f32[16] parameter(0)
  ROOT r = f32[16] negate(x)
}
b1 {
  x = f32[16] parameter(0)
  ROOT r = f32[16] exponential(x)
}
b2 {
  x = f32[16] parameter(0)
  ROOT r = f32[16] abs(x)
}
ENTRY e {
  x = f32[16] parameter(0)
  k = s32[] constant()" +
         std::to_string(k) + R"()
  ROOT y = f32[16] conditional(k, x, x, x), branch_computations={b0, b1, b2}
})";
}

void ExpectNoCallsInEntry(const hlo::HloModule& m) {
  for (const auto& i : m.entry_computation()->instructions()) {
    EXPECT_NE(i->opcode(), HloOpcode::kCall) << i->name();
    EXPECT_NE(i->opcode(), HloOpcode::kFusion) << i->name();
    EXPECT_NE(i->opcode(), HloOpcode::kConditional) << i->name();
  }
}

TEST(CallInlinerTest, NestedCallsAndFusionsAreInlinedWithUniqueNames) {
  CallInliner pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kCalls);
  ASSERT_NE(m, nullptr);
  ExpectNoCallsInEntry(*m);
  const hlo::HloInstruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kSubtract);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kParameter);
  // Both callees' `m` are kept, one renamed.
  EXPECT_NE(root->name(), root->operand(0)->operand(0)->name());
  EXPECT_EQ(root->name().rfind("m", 0), 0u) << root->name();
  EXPECT_EQ(m->computations().size(), 4u);  // callees stay in the module
}

TEST(CallInlinerTest, PredConditionalIsIfConvertedWithSelects) {
  CallInliner pass;
  for (const char* dir : {"direction=GT", "direction=LE"}) {
    std::string text = kPredConditional;
    text.replace(text.find("direction=GT"), 12, dir);
    auto m = testing::ExpectRewriteKeepsBits(pass, text);
    ASSERT_NE(m, nullptr);
    ExpectNoCallsInEntry(*m);
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kNegate), 1);  // both branches run
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kExp), 1);
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kSelect), 2);  // one per result leaf
  }
}

TEST(CallInlinerTest, IndexConditionalKeepsXlasBranchIncludingOutOfRange) {
  CallInliner pass;
  for (int k : {-1, 0, 1, 2, 3}) {
    auto m = testing::ExpectRewriteKeepsBits(pass, IndexConditional(k));
    ASSERT_NE(m, nullptr) << k;
    ExpectNoCallsInEntry(*m);
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kNegate), 1) << k;  // every branch runs
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kExp), 1) << k;
    EXPECT_EQ(testing::CountInEntry(*m, HloOpcode::kAbs), 1) << k;
  }
}

TEST(CallInlinerTest, AModuleWithoutCallsIsUnchanged) {
  CallInliner pass;
  testing::ExpectUnchanged(pass, R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
})");
}

}  // namespace
}  // namespace tpusim::compiler
