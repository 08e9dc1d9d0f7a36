// canonicalize: dots of every dimension-number shape become [B,M,K] x [B,K,N] / [B,N,K] (checked on
// the rewritten IR) and compute the same values as before (checked with the evaluator).
#include "compiler/passes/canonicalize.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "compile_test_util.h"
#include "hlo/computation.h"
#include "hlo/eval/evaluator.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

const HloInstruction* FindDot(const hlo::HloModule& m) {
  for (const auto& i : m.entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kDot) return i.get();
  }
  return nullptr;
}

int Count(const hlo::HloModule& m, HloOpcode op) {
  int n = 0;
  for (const auto& i : m.entry_computation()->instructions()) n += i->opcode() == op;
  return n;
}

// Runs canonicalize on `text`; checks the verifier accepts the result, the values are bit-identical
// to the original module's, and returns the rewritten module.
std::unique_ptr<hlo::HloModule> CanonicalizeAndCheck(const std::string& text, bool expect_change) {
  auto original = testing::Parse(text);
  auto module = testing::Parse(text);
  if (!original || !module) return nullptr;
  Canonicalize pass;
  auto changed = pass.Run(*module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(*changed, expect_change) << hlo::PrintModule(*module);
  Status v = hlo::VerifyModule(*module);
  EXPECT_TRUE(v.ok()) << v.message() << "\n" << hlo::PrintModule(*module);
  auto args = hlo::Evaluator::MakeRandomArguments(*original, 7);
  EXPECT_TRUE(args.ok());
  hlo::Evaluator ev;
  auto a = ev.Evaluate(*original, *args);
  auto b = ev.Evaluate(*module, *args);
  EXPECT_TRUE(a.ok() && b.ok());
  if (a.ok() && b.ok()) {
    EXPECT_TRUE(a->BitwiseEqual(*b)) << hlo::PrintModule(*module);
  }
  return module;
}

void ExpectCanonical(const HloInstruction* dot, std::vector<int64_t> lhs, std::vector<int64_t> rhs,
                     int64_t rhs_contracting) {
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->operand(0)->shape().dimensions(), lhs);
  EXPECT_EQ(dot->operand(1)->shape().dimensions(), rhs);
  const auto& dn = dot->dot_dimension_numbers();
  const int64_t rank = static_cast<int64_t>(lhs.size());
  EXPECT_EQ(dn.lhs_contracting_dimensions, std::vector<int64_t>{rank - 1});
  EXPECT_EQ(dn.rhs_contracting_dimensions, std::vector<int64_t>{rhs_contracting});
  if (rank == 3) {
    EXPECT_EQ(dn.lhs_batch_dimensions, std::vector<int64_t>{0});
    EXPECT_EQ(dn.rhs_batch_dimensions, std::vector<int64_t>{0});
  } else {
    EXPECT_TRUE(dn.lhs_batch_dimensions.empty());
  }
}

TEST(CanonicalizeTest, CanonicalDotIsUnchanged) {
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                                /*expect_change=*/false);
  ASSERT_NE(m, nullptr);
  ExpectCanonical(FindDot(*m), {2, 3, 4}, {2, 4, 5}, 1);
}

bool MarkedStationaryLhs(const hlo::HloModule& m) {
  const HloInstruction* dot = FindDot(m);
  return dot != nullptr && DotHasStationaryLhs(*dot);
}

// A result layout with an LHS free dimension minor-most says XLA's TPU backend held the LHS
// stationary (the MXU's columns are the result's lanes): the dot is marked, also when it is
// rewritten; a row-major result, an RHS free dimension minor, or a matrix-vector product is not.
TEST(CanonicalizeTest, ResultLayoutWithLhsFreeDimMinorMarksStationaryLhs) {
  auto batched = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  a = bf16[2,3,5,6,16] parameter(0)
  b = bf16[2,3,5,24] parameter(1)
  ROOT d = bf16[2,3,6,16,24]{3,4,2,1,0} dot(a, b), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})",
                                      true);
  ASSERT_NE(batched, nullptr);
  EXPECT_TRUE(MarkedStationaryLhs(*batched));
  const char* kPlain = R"(
HloModule m
ENTRY e {
  a = f32[12,4] parameter(0)
  b = f32[4,20] parameter(1)
  ROOT d = f32[12,20]%s dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  struct Case {
    const char* layout;
    bool marked;
  };
  for (const Case c : {Case{"{0,1}", true}, Case{"{1,0}", false}, Case{"", false}}) {
    char text[512];
    std::snprintf(text, sizeof text, kPlain, c.layout);
    auto m = CanonicalizeAndCheck(text, c.marked);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(MarkedStationaryLhs(*m), c.marked) << c.layout;
  }
  // [12,1] with {0,1}: N = 1, nothing to choose.
  auto gemv = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  a = f32[12,4] parameter(0)
  b = f32[4,1] parameter(1)
  ROOT d = f32[12,1]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                   false);
  ASSERT_NE(gemv, nullptr);
  EXPECT_FALSE(MarkedStationaryLhs(*gemv));
}

TEST(CanonicalizeTest, TransposedRhsStaysNkForm) {
  // [N,K] weights (PyTorch's Linear) need no transpose: the MXU loads them with transpose=1.
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  w = f32[5,4] parameter(1)
  ROOT d = f32[6,5] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})",
                                false);
  ASSERT_NE(m, nullptr);
  ExpectCanonical(FindDot(*m), {6, 4}, {5, 4}, 1);
  EXPECT_EQ(Count(*m, HloOpcode::kTranspose), 0);
}

TEST(CanonicalizeTest, TransposeOperandIsFolded) {
  // The MNIST pattern: dot(x, transpose(w)) -> dot(x, w) with w in [N,K] form; the transpose dies.
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  w = f32[5,4] parameter(1)
  t = f32[4,5] transpose(w), dimensions={1,0}
  ROOT d = f32[6,5] dot(x, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                true);
  ASSERT_NE(m, nullptr);
  const HloInstruction* dot = FindDot(*m);
  ExpectCanonical(dot, {6, 4}, {5, 4}, 1);
  EXPECT_EQ(dot->operand(1)->name(), "w");
  EXPECT_EQ(Count(*m, HloOpcode::kTranspose), 0);
}

TEST(CanonicalizeTest, ContractingLhsDimZeroStaysKm) {
  // x^T . g (a weight gradient): lhs contracting dim 0 stays [K,M] (the "KM" form: the dot kernel
  // transposes LHS blocks on the XLU in VMEM), no whole-array transpose.
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  g = f32[8,3] parameter(0)
  x = f32[8,5] parameter(1)
  ROOT d = f32[3,5] dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
                                false);  // already canonical
  ASSERT_NE(m, nullptr);
  const HloInstruction* dot = FindDot(*m);
  EXPECT_EQ(dot->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(dot->dot_dimension_numbers().lhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(dot->name(), "d") << "the MXU dot keeps the user's name";
}

TEST(CanonicalizeTest, LhsWithFreeDimsOutOfOrderGetsTranspose) {
  // Contracting dimension between two free ones: neither [M,K] nor [K,M] -> explicit transpose.
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  g = f32[3,8,2] parameter(0)
  x = f32[8,5] parameter(1)
  ROOT d = f32[3,2,5] dot(g, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                true);
  ASSERT_NE(m, nullptr);
  const HloInstruction* dot = FindDot(*m);
  ExpectCanonical(dot, {6, 8}, {8, 5}, 0);
}

TEST(CanonicalizeTest, BatchDimsInTheMiddle) {
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[4,2,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
})",
                                true);
  ASSERT_NE(m, nullptr);
  ExpectCanonical(FindDot(*m), {2, 3, 4}, {2, 4, 5}, 1);
}

TEST(CanonicalizeTest, SeveralContractingAndFreeDimsAreMerged) {
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  a = f32[2,3,4,6] parameter(0)
  b = f32[4,6,5,7] parameter(1)
  ROOT d = f32[2,3,5,7] dot(a, b), lhs_contracting_dims={2,3}, rhs_contracting_dims={0,1}
})",
                                true);
  ASSERT_NE(m, nullptr);
  const HloInstruction* dot = FindDot(*m);
  ExpectCanonical(dot, {6, 24}, {24, 35}, 0);
  EXPECT_EQ(m->entry_computation()->root_instruction()->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().dimensions(),
            (std::vector<int64_t>{2, 3, 5, 7}));
}

TEST(CanonicalizeTest, BatchedTransposedContractingDims) {
  // Attention-style scores: q [B,H,S,D] . k [B,H,S,D] contracting D, batch {B,H}.
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  q = f32[2,3,4,8] parameter(0)
  k = f32[2,3,5,8] parameter(1)
  ROOT s = f32[2,3,4,5] dot(q, k), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
})",
                                true);
  ASSERT_NE(m, nullptr);
  ExpectCanonical(FindDot(*m), {6, 4, 8}, {6, 5, 8}, 2);
  EXPECT_EQ(Count(*m, HloOpcode::kTranspose), 0);
}

TEST(CanonicalizeTest, NoOpReshapeAndCopyAreRemoved) {
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  r = f32[4,4] reshape(a)
  c = f32[4,4]{0,1} copy(r)
  ROOT n = f32[4,4] negate(c)
})",
                                true);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 2);
  EXPECT_EQ(m->entry_computation()->root_instruction()->operand(0)->name(), "a");
}

// A per-channel scale broadcast along a middle dimension, read by elementwise ops, becomes a
// per-row column ([4,5,3]) broadcast along the leading dimensions (which the lowering reads as it
// streams instead of materializing [4,5,3,16]); the values are unchanged.
TEST(CanonicalizeTest, MiddleDimensionBroadcastBecomesAPerRowColumn) {
  auto m = CanonicalizeAndCheck(R"(
HloModule m
ENTRY e {
  x = f32[4,5,3,16] parameter(0)
  s = f32[3] parameter(1)
  b = f32[4,5,3,16] broadcast(s), dimensions={2}
  ROOT y = f32[4,5,3,16] multiply(x, b)
})",
                                true);
  ASSERT_NE(m, nullptr);
  const HloInstruction* b = m->entry_computation()->root_instruction()->operand(1);
  ASSERT_EQ(b->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(b->dimensions(), (std::vector<int64_t>{0, 1, 2}));
  const HloInstruction* rows = b->operand(0);
  ASSERT_EQ(rows->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(rows->shape().dimensions(), (std::vector<int64_t>{4, 5, 3}));
  EXPECT_EQ(rows->dimensions(), (std::vector<int64_t>{2}));
}

// Left alone: a broadcast along the last dimension (a bias: already read as a row), one along
// the leading dimensions, one with a non-elementwise reader, and a transposing broadcast.
TEST(CanonicalizeTest, OtherBroadcastsAreNotSplit) {
  for (const char* body : {
           "b = f32[4,5,3,16] broadcast(s16), dimensions={3}\n  ROOT y = f32[4,5,3,16] add(x, b)",
           "b = f32[4,5,3,16] broadcast(s453), dimensions={0,1,2}\n  ROOT y = f32[4,5,3,16] add(x, b)",
           "b = f32[4,5,3,16] broadcast(s3), dimensions={2}\n  ROOT y = f32[4,5,16,3] transpose(b), dimensions={0,1,3,2}",
           "b = f32[4,5,3,16] broadcast(s53), dimensions={2,1}\n  ROOT y = f32[4,5,3,16] add(x, b)",
       }) {
    const std::string text = std::string(R"(
HloModule m
ENTRY e {
  x = f32[4,5,3,16] parameter(0)
  s16 = f32[16] parameter(1)
  s453 = f32[4,5,3] parameter(2)
  s3 = f32[3] parameter(3)
  s53 = f32[3,5] parameter(4)
  )") + body + "\n}";
    auto m = CanonicalizeAndCheck(text, false);
    ASSERT_NE(m, nullptr) << body;
    EXPECT_EQ(Count(*m, HloOpcode::kBroadcast), 1) << body;
  }
}

}  // namespace
}  // namespace tpusim::compiler
