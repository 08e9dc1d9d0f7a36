// cholesky-expander (compiler/passes/cholesky_expander.h): blocked and unblocked factorizations of
// every batch rank and both triangles match the evaluator's f64 kernel within f32 rounding; a
// matrix that is not positive definite factors to NaN. (Moved from linalg_expander_test.cc.)
#include "compiler/passes/cholesky_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "tests/compiler/linalg_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CholeskyModule;
using testing::ExpandedVsKernel;
using testing::Parse;

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

// A non-square operand is a located error naming the instruction.
TEST(CholeskyExpanderTest, NonSquareOperandIsLocated) {
  CholeskyExpander pass;
  const std::string msg = testing::ExpectRefused(pass, R"(
HloModule bad
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT l = f32[4,3] cholesky(a), lower=true
}
)", "%l");
  EXPECT_NE(msg.find("test.hlo:5:"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tpusim::compiler
