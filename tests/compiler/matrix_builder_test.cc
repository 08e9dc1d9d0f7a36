// MatrixBuilder (compiler/passes/matrix_builder.h), the batched-matrix helpers of the cholesky and
// triangular-solve expanders: each helper acts on the two minor dimensions and keeps the batch
// dimension; its values are checked on the reference evaluator against hand-computed matrices.
#include "compiler/passes/matrix_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::PrimitiveType;

// a: two 2x3 matrices (batch 2); the root `r` is the anchor the tests build in front of.
constexpr char kModule[] = R"(
HloModule matrices
ENTRY e {
  a = f32[2,2,3] constant({{{1, 2, 3}, {4, 5, 6}}, {{-1, 0, 1}, {2, nan, 7}}})
  ROOT r = f32[2,2,3] negate(a)
}
)";

struct Fixture {
  std::unique_ptr<hlo::HloModule> m;
  HloInstruction* a = nullptr;
  std::unique_ptr<MatrixBuilder> mb;
};

Fixture Make() {
  Fixture f;
  auto parsed = hlo::ParseHloModule(kModule, "test.hlo");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return f;
  f.m = std::move(parsed).value();
  hlo::HloComputation& c = *f.m->entry_computation();
  for (const auto& i : c.instructions()) {
    if (i->name() == "a") f.a = i.get();
  }
  f.mb = std::make_unique<MatrixBuilder>(&c, c.root_instruction());
  return f;
}

// Makes `v` the root, verifies the module and returns its value as doubles (row-major).
std::vector<double> Values(hlo::HloModule& m, HloInstruction* v) {
  m.entry_computation()->set_root_instruction(v);
  const Status verified = hlo::VerifyModule(m);
  EXPECT_TRUE(verified.ok()) << verified.message();
  hlo::Evaluator ev;
  auto out = ev.Evaluate(m, {});
  EXPECT_TRUE(out.ok()) << out.status().message();
  std::vector<double> got;
  if (!out.ok()) return got;
  for (int64_t k = 0; k < v->shape().ElementCount(); ++k) got.push_back(out->GetAsDouble(k));
  return got;
}

TEST(MatrixBuilderTest, SliceAndUpdateActOnTheMinorDimensions) {
  Fixture f = Make();
  ASSERT_NE(f.a, nullptr);
  HloInstruction* col = f.mb->SliceMinor(f.a, 0, 1, 2, 2);  // column 1 of each matrix
  EXPECT_EQ(col->shape().dimensions(), (std::vector<int64_t>{2, 2, 1}));
  HloInstruction* tens = f.mb->Full(PrimitiveType::kF32, 10, {2, 1, 2});
  HloInstruction* updated = f.mb->UpdateMinor(f.a, tens, 1, 1);  // row 1, columns 1..2
  const std::vector<double> got = Values(*f.m, updated);
  const std::vector<double> want = {1, 2, 3, 4, 10, 10, -1, 0, 1, 2, 10, 10};
  EXPECT_EQ(got, want);
}

TEST(MatrixBuilderTest, BatchDotWithTransposesMultipliesEachMatrix) {
  Fixture f = Make();
  ASSERT_NE(f.a, nullptr);
  // Batch 0 only (batch 1 holds a NaN): A A^T of [[1,2,3],[4,5,6]] = [[14,32],[32,77]].
  HloInstruction* a0 = f.mb->builder().Slice(f.a, {0, 0, 0}, {1, 2, 3}, {1, 1, 1}, "first");
  HloInstruction* aat = f.mb->BatchDot(a0, false, a0, true);
  EXPECT_EQ(aat->shape().dimensions(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(Values(*f.m, aat), (std::vector<double>{14, 32, 32, 77}));
  // A^T A is 3x3; its (0, 2) element is 1*3 + 4*6 = 27.
  HloInstruction* ata = f.mb->BatchDot(a0, true, a0, false);
  EXPECT_EQ(ata->shape().dimensions(), (std::vector<int64_t>{1, 3, 3}));
  EXPECT_EQ(Values(*f.m, ata)[2], 27);
}

TEST(MatrixBuilderTest, TransposeMinorSwapsRowsAndColumns) {
  Fixture f = Make();
  ASSERT_NE(f.a, nullptr);
  HloInstruction* t = f.mb->TransposeMinor(f.a);
  EXPECT_EQ(t->shape().dimensions(), (std::vector<int64_t>{2, 3, 2}));
  const std::vector<double> got = Values(*f.m, t);
  EXPECT_EQ((std::vector<double>(got.begin(), got.begin() + 6)),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(MatrixBuilderTest, TriangleMasksShareOneIotaPerDimension) {
  Fixture f = Make();
  ASSERT_NE(f.a, nullptr);
  const std::vector<int64_t> dims = {1, 3, 3};
  HloInstruction* lower = f.mb->TriangleMask(dims, hlo::ComparisonDirection::kGe, 0);
  HloInstruction* strict = f.mb->TriangleMask(dims, hlo::ComparisonDirection::kGt, 0);
  EXPECT_EQ(lower->operand(0), strict->operand(0));  // the row iota, made once
  EXPECT_EQ(f.mb->Iota(dims, 1), lower->operand(0));
  EXPECT_EQ(Values(*f.m, lower), (std::vector<double>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  // An offset shifts the diagonal: row >= col + 1 is the strict lower triangle.
  HloInstruction* shifted = f.mb->TriangleMask(dims, hlo::ComparisonDirection::kGe, 1);
  EXPECT_EQ(Values(*f.m, shifted), (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 1, 0}));
}

TEST(MatrixBuilderTest, IsNanAndBroadcastScalarMatrix) {
  Fixture f = Make();
  ASSERT_NE(f.a, nullptr);
  const std::vector<double> nan = Values(*f.m, f.mb->IsNan(f.a));
  EXPECT_EQ(nan, (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}));
  // The [2,1,1] corner a[:, 0:1, 0:1] = {1, -1}, broadcast to every element of its matrix.
  HloInstruction* corner = f.mb->SliceMinor(f.a, 0, 0, 1, 1);
  const std::vector<double> got = Values(*f.m, f.mb->BroadcastScalarMatrix(corner, f.a));
  EXPECT_EQ(got, (std::vector<double>{1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1}));
}

}  // namespace
}  // namespace tpusim::compiler
