// cholesky-expander and triangular-solve-expander (issue 16): the evaluator's f64 kernels against
// known answers; the expansions, evaluated on the CPU evaluator, against the evaluator's kernels
// for every option (several shapes, batch dimensions, blocked factorizations with small blocks);
// and compiled modules run on the ISA interpreter against the evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "compile_test_util.h"
#include "compiler/passes/cholesky_expander.h"
#include "compiler/passes/triangular_solve_expander.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::Parse;
using testing::WorstError;

std::string Dims(const std::string& batch, int64_t r, int64_t c) {
  return fmt::format("[{}{},{}]", batch.empty() ? "" : batch + ",", r, c);
}

// f32 `name` = p + diag * I of shape batch + [k, k] (p a parameter): a triangle that solves well.
std::string Dominant(const std::string& name, const std::string& batch, int64_t k, int param,
                     double diag) {
  const std::string d = Dims(batch, k, k);
  const int rank = static_cast<int>(std::count(batch.begin(), batch.end(), ',')) +
                   (batch.empty() ? 2 : 3);
  return fmt::format(R"(
  {0}.p = f32{1} parameter({2})
  {0}.r = s32{1} iota(), iota_dimension={3}
  {0}.c = s32{1} iota(), iota_dimension={4}
  {0}.eye = pred{1} compare({0}.r, {0}.c), direction=EQ
  {0}.v = f32[] constant({5})
  {0}.big = f32{1} broadcast({0}.v), dimensions={{}}
  {0}.z0 = f32[] constant(0)
  {0}.z = f32{1} broadcast({0}.z0), dimensions={{}}
  {0}.diag = f32{1} select({0}.eye, {0}.big, {0}.z)
  {0} = f32{1} add({0}.p, {0}.diag))",
                     name, d, param, rank - 2, rank - 1, diag);
}

std::string BatchDims(const std::string& batch) {
  std::string out;
  const int n = batch.empty() ? 0 : static_cast<int>(std::count(batch.begin(), batch.end(), ',')) + 1;
  for (int i = 0; i < n; ++i) out += fmt::format("{}{}", i ? "," : "", i);
  return out;
}

// cholesky of a symmetric positive definite s = p * p^T + n * I.
std::string CholeskyModule(const std::string& batch, int64_t n, bool lower) {
  const std::string d = Dims(batch, n, n);
  const int nb = batch.empty() ? 0 : static_cast<int>(std::count(batch.begin(), batch.end(), ',')) + 1;
  return fmt::format(R"(
HloModule chol
ENTRY e {{{0}
  q = f32{1} parameter(1)
  pt = f32{1} dot(q, q), lhs_batch_dims={{{2}}}, rhs_batch_dims={{{2}}}, lhs_contracting_dims={{{3}}}, rhs_contracting_dims={{{3}}}, operand_precision={{highest,highest}}
  s = f32{1} add(pt, a.diag)
  ROOT l = f32{1} cholesky(s), lower={4}
}}
)",
                     Dominant("a", batch, n, 0, static_cast<double>(n)), d, BatchDims(batch),
                     nb + 1, lower ? "true" : "false");
}

std::string SolveModule(const std::string& batch, int64_t k, int64_t other, bool left, bool lower,
                        const std::string& transpose, bool unit) {
  const std::string bshape = left ? Dims(batch, k, other) : Dims(batch, other, k);
  return fmt::format(R"(
HloModule trsm
ENTRY e {{{0}
  b = f32{1} parameter(1)
  ROOT x = f32{1} triangular-solve(a, b), left_side={2}, lower={3}, unit_diagonal={4}, transpose_a={5}
}}
)",
                     Dominant("a", batch, k, 0, 4.0), bshape, left ? "true" : "false",
                     lower ? "true" : "false", unit ? "true" : "false", transpose);
}

// Evaluates `text` as written and after `pass`, with the same random arguments; the worst
// tolerance ratio of the expansion against the evaluator's kernel.
double ExpandedVsKernel(const std::string& text, HloPass& pass, double atol, double rtol) {
  auto want_m = Parse(text);
  auto got_m = Parse(text);
  if (!want_m || !got_m) return 1e9;
  auto changed = pass.Run(*got_m);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(changed.ok() && *changed);
  for (const auto& comp : got_m->computations()) {
    for (const auto& i : comp->instructions()) {
      EXPECT_NE(i->opcode(), hlo::HloOpcode::kCholesky);
      EXPECT_NE(i->opcode(), hlo::HloOpcode::kTriangularSolve);
    }
  }
  auto args = hlo::Evaluator::MakeRandomArguments(*want_m, 7);
  EXPECT_TRUE(args.ok());
  if (!args.ok()) return 1e9;
  hlo::Evaluator ev;
  auto want = ev.Evaluate(*want_m, *args);
  auto got = ev.Evaluate(*got_m, *args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  EXPECT_TRUE(got.ok()) << got.status().message();
  if (!want.ok() || !got.ok()) return 1e9;
  return WorstError(*got, *want, atol, rtol);
}

TEST(LinalgEvaluatorTest, KnownAnswers) {
  auto m = Parse(R"(
HloModule known
ENTRY e {
  a = f32[2,2] constant({{4, 2}, {2, 3}})
  lo = f32[2,2] cholesky(a), lower=true
  up = f32[2,2] cholesky(a), lower=false
  bad = f32[2,2] constant({{1, 2}, {2, 1}})
  badl = f32[2,2] cholesky(bad), lower=true
  t = f32[2,2] constant({{2, 0}, {1, 1}})
  b = f32[2,1] constant({{2}, {3}})
  x = f32[2,1] triangular-solve(t, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  bt = f32[1,2] constant({{2, 3}})
  y = f32[1,2] triangular-solve(t, bt), left_side=false, lower=true, transpose_a=TRANSPOSE
  ROOT r = (f32[2,2], f32[2,2], f32[2,2], f32[2,1], f32[1,2]) tuple(lo, up, badl, x, y)
}
)");
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto leaves = r->Leaves();
  const double s2 = std::sqrt(2.0);
  const double lo[] = {2, 0, 1, s2}, up[] = {2, 1, 0, s2};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(leaves[0]->GetAsDouble(i), lo[i], 1e-6) << i;
    EXPECT_NEAR(leaves[1]->GetAsDouble(i), up[i], 1e-6) << i;
    EXPECT_TRUE(std::isnan(leaves[2]->GetAsDouble(i))) << i;
  }
  // [[2,0],[1,1]] x = [2,3] -> x = [1, 2]; y [[2,1],[0,1]] = [2,3] (y t^T = bt) -> y = [1, 2].
  EXPECT_NEAR(leaves[3]->GetAsDouble(0), 1.0, 1e-6);
  EXPECT_NEAR(leaves[3]->GetAsDouble(1), 2.0, 1e-6);
  EXPECT_NEAR(leaves[4]->GetAsDouble(0), 1.0, 1e-6);
  EXPECT_NEAR(leaves[4]->GetAsDouble(1), 2.0, 1e-6);
}

TEST(TriangularSolveExpanderTest, EveryOptionMatchesTheKernel) {
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* t : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          for (const auto& [batch, k, other] :
               {std::tuple<std::string, int64_t, int64_t>{"", 5, 3}, {"2", 4, 1}, {"2,3", 7, 2}}) {
            const std::string text = SolveModule(batch, k, other, left, lower, t, unit);
            TriangularSolveExpander pass;
            EXPECT_LE(ExpandedVsKernel(text, pass, 1e-5, 1e-4), 1.0) << text;
          }
        }
      }
    }
  }
}

TEST(CholeskyExpanderTest, BlockedAndUnblockedMatchTheKernel) {
  for (bool lower : {true, false}) {
    for (const auto& [batch, n] : {std::pair<std::string, int64_t>{"", 1}, {"", 6}, {"3", 9},
                                   {"2,2", 5}}) {
      for (int64_t block : {int64_t{128}, int64_t{4}, int64_t{1}}) {
        const std::string text = CholeskyModule(batch, n, lower);
        CholeskyExpander pass(block);
        EXPECT_LE(ExpandedVsKernel(text, pass, 1e-5, 1e-4), 1.0)
            << "block " << block << "\n" << text;
      }
    }
  }
}

// A matrix that is not positive definite factors to NaN, as XLA's expansion returns it.
TEST(CholeskyExpanderTest, NotPositiveDefiniteIsNaN) {
  const std::string text = R"(
HloModule bad
ENTRY e {
  p = f32[2,3,3] parameter(0)
  ROOT l = f32[2,3,3] cholesky(p), lower=true
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(CholeskyExpander(2).Run(*m).ok());
  auto args = hlo::Evaluator::MakeRandomArguments(*m, 1);
  ASSERT_TRUE(args.ok());
  for (int64_t i = 0; i < 9; ++i) (*args)[0].SetFromDouble(i, i == 4 ? -1.0 : (i % 4 == 0 ? 1 : 0));
  for (int64_t i = 9; i < 18; ++i) (*args)[0].SetFromDouble(i, (i - 9) % 4 == 0 ? 4.0 : 0.0);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, *args);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int64_t i = 0; i < 9; ++i) EXPECT_TRUE(std::isnan(r->GetAsDouble(i))) << i;
  for (int64_t i = 9; i < 18; ++i) {
    EXPECT_NEAR(r->GetAsDouble(i), (i - 9) % 4 == 0 ? 2.0 : 0.0, 1e-6) << i;
  }
}

// Compiled to the ISA and run on the interpreter: the values match the evaluator's kernels.
TEST(LinalgLoweringTest, CompiledCholeskyAndSolveMatchTheEvaluator) {
  CheckAgainstEvaluator(CholeskyModule("2", 6, true), "tiny", 1e-4, 1e-3);
  CheckAgainstEvaluator(CholeskyModule("", 5, false), "tiny", 1e-4, 1e-3);
  CheckAgainstEvaluator(SolveModule("2", 6, 3, true, true, "NO_TRANSPOSE", false), "tiny", 1e-4,
                        1e-3);
  CheckAgainstEvaluator(SolveModule("", 5, 4, false, false, "TRANSPOSE", true), "tpu-v4", 1e-4,
                        1e-3);
}

// Bad operands are located errors naming the instruction.
TEST(LinalgLoweringTest, BadOperandsAreLocated) {
  auto m = Parse(R"(
HloModule bad
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true
}
)");
  ASSERT_NE(m, nullptr);
  auto r = TriangularSolveExpander().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("test.hlo:6:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("%x"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
