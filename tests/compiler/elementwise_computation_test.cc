// elementwise_computation (compiler/passes/elementwise_computation.h): which scalar computations
// can be applied to whole arrays, and ApplyElementwise's clones (opcodes, shapes, one array per
// root leaf) and refusals. The values of applied computations are checked through the passes that
// use it (map_expander_test.cc, variadic_reduce_expander_test.cc, sort_expander_test.cc).
#include "compiler/passes/elementwise_computation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/parser.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;
using V = std::vector<int64_t>;

constexpr char kModule[] = R"(HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  k = f32[] constant(2)
  w = f32[] multiply(v, k)
  ROOT r = (f32[], s32[]) tuple(w, i)
}
with_array {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[4] broadcast(a), dimensions={}
  ROOT s = f32[] add(a, b)
}
with_reduce {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(a, z), dimensions={}, to_apply=with_array
}
ENTRY e {
  x = f32[3,5] parameter(0)
  xi = s32[3,5] parameter(1)
  y = f32[3,5] parameter(2)
  yi = s32[3,5] parameter(3)
  ROOT t = (f32[3,5], s32[3,5], f32[3,5], s32[3,5]) tuple(x, xi, y, yi)
})";

std::unique_ptr<hlo::HloModule> ParseOk() {
  auto m = hlo::ParseHloModule(kModule, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

TEST(ElementwiseComputationTest, OnlyScalarElementwiseComputationsQualify) {
  auto m = ParseOk();
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(IsElementwiseComputation(*m->FindComputation("argmax")));
  EXPECT_FALSE(IsElementwiseComputation(*m->FindComputation("with_array")));  // a broadcast
  EXPECT_FALSE(IsElementwiseComputation(*m->FindComputation("with_reduce")));
}

TEST(ElementwiseComputationTest, ApplyClonesEveryOpWithTheArraysDimensions) {
  auto m = ParseOk();
  ASSERT_NE(m, nullptr);
  hlo::HloComputation* e = m->entry_computation();
  hlo::HloInstruction* root = e->root_instruction();
  std::vector<hlo::HloInstruction*> args;
  for (int64_t i = 0; i < 4; ++i) args.push_back(root->operand(i));
  HloBuilder b(e, root);
  auto out = ApplyElementwise(b, *m->FindComputation("argmax"), args, {3, 5});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 2u);  // one array per root leaf
  EXPECT_EQ((*out)[0]->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ((*out)[0]->shape().ToString(false), "f32[3,5]");
  EXPECT_EQ((*out)[1]->opcode(), HloOpcode::kSelect);
  EXPECT_EQ((*out)[1]->shape().ToString(false), "s32[3,5]");
  EXPECT_EQ((*out)[1]->operand(0)->opcode(), HloOpcode::kCompare);
  EXPECT_EQ((*out)[1]->operand(0)->shape().dimensions(), (V{3, 5}));
  // The scalar constant is broadcast to the arrays' dimensions.
  EXPECT_EQ((*out)[0]->operand(1)->shape().dimensions(), (V{3, 5}));
}

TEST(ElementwiseComputationTest, ApplyRefusesOtherComputationsAndMisfitArguments) {
  auto m = ParseOk();
  ASSERT_NE(m, nullptr);
  hlo::HloComputation* e = m->entry_computation();
  hlo::HloInstruction* root = e->root_instruction();
  HloBuilder b(e, root);
  std::vector<hlo::HloInstruction*> two = {root->operand(0), root->operand(2)};
  auto bad = ApplyElementwise(b, *m->FindComputation("with_array"), two, {3, 5});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto short_args = ApplyElementwise(b, *m->FindComputation("argmax"), two, {3, 5});
  ASSERT_FALSE(short_args.ok());
  EXPECT_EQ(short_args.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::compiler
