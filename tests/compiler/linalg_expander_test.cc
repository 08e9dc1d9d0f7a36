// cholesky and triangular-solve (issue 16): the evaluator's f64 kernels against known answers, and
// compiled modules run on the ISA interpreter against the evaluator. The expanders' own tests are
// cholesky_expander_test.cc and triangular_solve_expander_test.cc.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/compiler/linalg_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::CholeskyModule;
using testing::Parse;
using testing::SolveModule;

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

// Compiled to the ISA and run on the interpreter: the values match the evaluator's kernels.
TEST(LinalgLoweringTest, CompiledCholeskyAndSolveMatchTheEvaluator) {
  CheckAgainstEvaluator(CholeskyModule("2", 6, true), "tiny", 1e-4, 1e-3);
  CheckAgainstEvaluator(CholeskyModule("", 5, false), "tiny", 1e-4, 1e-3);
  CheckAgainstEvaluator(SolveModule("2", 6, 3, true, true, "NO_TRANSPOSE", false), "tiny", 1e-4,
                        1e-3);
  CheckAgainstEvaluator(SolveModule("", 5, 4, false, false, "TRANSPOSE", true), "tpu-v4", 1e-4,
                        1e-3);
}

}  // namespace
}  // namespace tpusim::compiler
