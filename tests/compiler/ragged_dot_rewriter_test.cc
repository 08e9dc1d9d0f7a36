// ragged-dot (issue 16): jax.lax.ragged_dot's grouped matmul, evaluated per group by the reference
// (hlo/eval/kernels/ragged_dot.h) and rewritten into a dense dot by ragged-dot-rewriter
// (compiler/passes/ragged_dot_rewriter.h), as XLA's RaggedDotRewriter does.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/passes/ragged_dot_rewriter.h"
#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

std::string RaggedModule(const std::string& sizes, const std::string& lhs = "parameter(0)",
                         const std::string& rhs = "parameter(1)", int64_t m = 3, int64_t k = 2,
                         int64_t n = 2, int64_t g = 2) {
  return fmt::format(R"(HloModule r
ENTRY e {{
  l = f32[{0},{1}] {4}
  w = f32[{3},{1},{2}] {5}
  s = s32[{3}] constant({6})
  ROOT r = f32[{0},{2}] ragged-dot(l, w, s), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}, lhs_ragged_dims={{0}}, rhs_group_dims={{0}}
}}
)",
                     m, k, n, g, lhs, rhs, sizes);
}

// By hand: rows [1, 0], [0, 1], [1, 1]; w[0] = [[1, 2], [3, 4]], w[1] = [[5, 6], [7, 8]].
// Sizes {1, 2}: row 0 takes w[0], rows 1 and 2 take w[1]. Sizes {1, 1}: row 2 is past the last
// group, 0. Sizes {0, 5}: every row w[1] (the sizes overrun the rows: clamped).
TEST(RaggedDotRewriterTest, KnownAnswerByHand) {
  const std::string l = "constant({{1, 0}, {0, 1}, {1, 1}})";
  const std::string w = "constant({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})";
  for (const auto& [sizes, want] :
       {std::pair<std::string, std::vector<double>>{"{1, 2}", {1, 2, 7, 8, 12, 14}},
        std::pair<std::string, std::vector<double>>{"{1, 1}", {1, 2, 7, 8, 0, 0}},
        std::pair<std::string, std::vector<double>>{"{0, 5}", {5, 6, 7, 8, 12, 14}}}) {
    SCOPED_TRACE(sizes);
    for (bool rewritten : {false, true}) {
      auto m = testing::Parse(RaggedModule(sizes, l, w));
      ASSERT_NE(m, nullptr);
      if (rewritten) {
        ASSERT_TRUE(RaggedDotRewriter().Run(*m).ok());
        EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kRaggedDot), 0);
        EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kDot), 1);
      }
      hlo::Evaluator ev;
      auto r = ev.Evaluate(*m, {});
      ASSERT_TRUE(r.ok()) << r.status().message();
      for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(r->GetAsDouble(i), want[i]) << i;
    }
  }
}

// Random operands, larger sizes: the dense dot equals the grouped one up to f32 summation order,
// on the evaluator and on the device (DEFAULT precision: bf16 operands, as the MXU).
TEST(RaggedDotRewriterTest, DenseDotAgreesWithTheGroups) {
  const std::string text =
      RaggedModule("{5, 0, 17, 9}", "parameter(0)", "parameter(1)", 40, 24, 16, 4);
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto args = hlo::Evaluator::MakeRandomArguments(*m, 11);
  ASSERT_TRUE(args.ok());
  hlo::Evaluator ev;
  auto want = ev.Evaluate(*m, *args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_TRUE(RaggedDotRewriter().Run(*m).ok());
  auto got = ev.Evaluate(*m, *args);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_LE(testing::WorstError(*got, *want, 1e-5, 1e-5), 1.0);
  for (int64_t i = 31 * 16; i < 40 * 16; ++i) EXPECT_EQ(want->GetAsDouble(i), 0) << i;
  testing::CheckAgainstEvaluator(text, "tpu-v4", 1e-4, 1e-3);
}

// Group sizes past the rows, in s64 and u32 and summing past 2^31 - 1 (issue 21 round six): the
// rewriter converted them to s32 first (2^63 - 1 and 2^32 - 1 became -1, two 2^31 - 1 summed to
// -2), so the device's groups were not the evaluator's and `run` FAILED its check (max abs error
// 2.75). Each size is now clamped to the rows in its own type first.
TEST(RaggedDotRewriterTest, WideGroupSizesAreClampedToTheRows) {
  for (const char* sizes : {"s64[3] constant({9223372036854775807, 9223372036854775807, 2})",
                            "u32[3] constant({4294967295, 1, 2})",
                            "s32[3] constant({2147483647, 2147483647, 2})",
                            "s32[3] constant({-5, 20, -1})"}) {
    const std::string text = fmt::format(R"(HloModule r
ENTRY e {{
  l = f32[8,4] parameter(0)
  w = f32[3,4,5] parameter(1)
  s = {}
  ROOT r = f32[8,5] ragged-dot(l, w, s), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}, lhs_ragged_dims={{0}}, rhs_group_dims={{0}}
}}
)",
                                         sizes);
    SCOPED_TRACE(sizes);
    testing::CheckAgainstEvaluator(text, "tpu-v4", 1e-4, 1e-3);
  }
}

}  // namespace
}  // namespace tpusim::compiler
