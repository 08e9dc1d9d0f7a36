// HloBuilder (compiler/passes/hlo_builder.h), the helper every expander pass builds instructions
// with: placement before the anchor, names derived from the anchor's, the anchor's location, the
// element types and dimensions of each builder, exact integer splats, and RewriteEach's contract.
// Values are checked on the reference evaluator after the built instructions become the root.
#include "compiler/passes/hlo_builder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "hlo/eval/evaluator.h"
#include "hlo/opcode.h"
#include "hlo/printer.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// f32[2,3] constants; the root `r` is the anchor the tests build in front of.
constexpr char kModule[] = R"(
HloModule builder
ENTRY e {
  x = f32[2,3] constant({{1, -2, 0.5}, {3, -0, 8}})
  ROOT r = f32[2,3] negate(x)
}
)";

std::unique_ptr<hlo::HloModule> Parse() {
  auto m = hlo::ParseHloModule(kModule, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

HloInstruction* Find(hlo::HloComputation& c, const std::string& name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

// Makes `v` the root, verifies the module and evaluates it (no parameters).
hlo::Literal RootValue(hlo::HloModule& m, HloInstruction* v) {
  m.entry_computation()->set_root_instruction(v);
  const Status verified = hlo::VerifyModule(m);
  EXPECT_TRUE(verified.ok()) << verified.message();
  hlo::Evaluator ev;
  auto out = ev.Evaluate(m, {});
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::move(out).value() : hlo::Literal();
}

TEST(HloBuilderTest, PlacesBeforeTheAnchorWithItsNameAndLocation) {
  auto m = Parse();
  ASSERT_NE(m, nullptr);
  hlo::HloComputation& c = *m->entry_computation();
  HloInstruction* r = Find(c, "r");
  HloBuilder b(&c, r);
  HloInstruction* one = b.Splat(r->shape(), 1.0, "one", "ones");
  HloInstruction* two = b.Splat(r->shape(), 2.0, "one");  // the same suffix: made unique
  EXPECT_EQ(one->name(), "r.ones");
  EXPECT_EQ(one->operand(0)->name(), "r.one");
  EXPECT_EQ(two->operand(0)->name(), "r.one.1");
  EXPECT_EQ(two->name(), "r.one.2");
  EXPECT_EQ(one->location().line, r->location().line);
  EXPECT_EQ(one->location().column, r->location().column);
  // Every new instruction stands before the anchor (def before use).
  bool anchor_seen = false;
  for (const auto& i : c.instructions()) {
    if (i.get() == r) anchor_seen = true;
    if (i.get() == one || i.get() == two) {
      EXPECT_FALSE(anchor_seen) << i->name();
    }
  }
  EXPECT_EQ(b.UniqueName("r.ones"), "r.ones.1");
  EXPECT_EQ(b.UniqueName("fresh"), "fresh");
}

TEST(HloBuilderTest, ConvertAndBitcastConvertKeepDimensionsAndChangeTheType) {
  auto m = Parse();
  ASSERT_NE(m, nullptr);
  hlo::HloComputation& c = *m->entry_computation();
  HloInstruction* x = Find(c, "x");
  HloBuilder b(&c, Find(c, "r"));
  HloInstruction* bits = b.BitcastConvert(x, PrimitiveType::kS32, "bits");
  EXPECT_EQ(bits->opcode(), HloOpcode::kBitcastConvert);
  EXPECT_EQ(bits->shape().element_type(), PrimitiveType::kS32);
  EXPECT_EQ(bits->shape().dimensions(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(bits->name(), "r.bits");
  HloInstruction* as_int = b.Convert(x, PrimitiveType::kS32, "int");
  EXPECT_EQ(as_int->opcode(), HloOpcode::kConvert);
  // bits(1.0f) = 0x3F800000; bits(-0.0f) = INT32_MIN; convert truncates 0.5 to 0.
  const hlo::Literal got = RootValue(*m, b.Tuple({bits, as_int}, "pair"));
  const std::vector<const hlo::Literal*> leaves = got.Leaves();
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0]->GetAsInt64(0), 0x3F800000);
  EXPECT_EQ(leaves[0]->GetAsInt64(4), INT32_MIN);
  const std::vector<int64_t> want = {1, -2, 0, 3, 0, 8};
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(leaves[1]->GetAsInt64(k), want[k]) << k;
}

TEST(HloBuilderTest, SplatIntIsExactPastDoublePrecision) {
  auto m = Parse();
  ASSERT_NE(m, nullptr);
  hlo::HloComputation& c = *m->entry_computation();
  HloBuilder b(&c, Find(c, "r"));
  const int64_t big = (int64_t{1} << 53) + 1;  // not a double
  HloInstruction* s = b.SplatInt(Shape(PrimitiveType::kS64, {2, 3}), big, "big");
  EXPECT_EQ(s->operand(0)->literal().int_values, std::vector<int64_t>{big});
  const hlo::Literal got = RootValue(*m, s);
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(got.GetAsInt64(k), big) << k;
}

TEST(HloBuilderTest, BinaryCompareSelectComputeElementwise) {
  auto m = Parse();
  ASSERT_NE(m, nullptr);
  hlo::HloComputation& c = *m->entry_computation();
  HloInstruction* x = Find(c, "x");
  HloBuilder b(&c, Find(c, "r"));
  HloInstruction* zero = b.Splat(x->shape(), 0.0, "zero");
  HloInstruction* neg = b.Compare(x, zero, hlo::ComparisonDirection::kLt, "neg");
  EXPECT_EQ(neg->shape().element_type(), PrimitiveType::kPred);
  EXPECT_EQ(neg->shape().dimensions(), (std::vector<int64_t>{2, 3}));
  HloInstruction* twice = b.Binary(HloOpcode::kAdd, x, x, "twice");
  // x < 0 ? 0 : 2x
  const hlo::Literal got = RootValue(*m, b.Select(neg, zero, twice, "relu2"));
  const std::vector<double> want = {2, 0, 1, 6, 0, 16};
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(got.GetAsDouble(k), want[k]) << k;
}

TEST(HloBuilderTest, RewriteEachVisitsMatchesCollectedBeforeRewriting) {
  auto m = Parse();
  ASSERT_NE(m, nullptr);
  int calls = 0;
  // Each rewrite adds a negate before its match; the added ones are not visited.
  auto changed = RewriteEach(
      *m, [](const HloInstruction& i) { return i.opcode() == HloOpcode::kNegate; },
      [&](hlo::HloComputation& comp, HloInstruction* i) -> bool {
        ++calls;
        HloBuilder b(&comp, i);
        b.Unary(HloOpcode::kNegate, i->operand(0), "extra");
        return false;
      });
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);  // every rewrite said it changed nothing
  EXPECT_EQ(calls, 1);
  auto failed = RewriteEach(
      *m, [](const HloInstruction& i) { return i.opcode() == HloOpcode::kNegate; },
      [](hlo::HloComputation&, HloInstruction*) -> StatusOr<bool> {
        return InvalidArgument("stop");
      });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "stop");
}

}  // namespace
}  // namespace tpusim::compiler

namespace tpusim::compiler {
namespace {

// CloneInstruction (what call-inliner, async-to-sync and the expanders copy instructions with)
// keeps every attribute: the clone of each instruction of each opcode's module in
// tests/data/hlo/opcodes/ prints as the original. (It once dropped fft_type and fft_length, so an
// fft inside a called computation — how JAX writes jnp.fft.fft — failed the verifier after
// call-inliner with exit 3.)
TEST(HloBuilderTest, CloneInstructionKeepsEveryAttributeOfEveryOpcode) {
  int cloned = 0;
  for (int op = 0; op < hlo::kHloOpcodeCount; ++op) {
    const std::string name(hlo::HloOpcodeString(static_cast<hlo::HloOpcode>(op)));
    const std::string path = "tests/data/hlo/opcodes/" + name + ".hlo";
    StatusOr<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status().message();
    auto m = hlo::ParseHloModule(*text, path);
    if (!m.ok()) continue;  // an opcode the parser refuses by design is the sweep's business
    for (const auto& comp : (*m)->computations()) {
      for (const auto& inst : comp->instructions()) {
        std::unique_ptr<hlo::HloInstruction> c =
            CloneInstruction(*inst, inst->operands(), inst->name());
        std::string want = hlo::PrintInstruction(*inst);
        if (want.rfind("ROOT ", 0) == 0) want = want.substr(5);  // the clone is in no computation
        EXPECT_EQ(hlo::PrintInstruction(*c), want) << path;
        ++cloned;
      }
    }
  }
  EXPECT_GT(cloned, 300);
}

}  // namespace
}  // namespace tpusim::compiler
