// PartialReduce (hlo/partial_reduce.h), the TPU custom-call of approx_max_k / approx_min_k: the
// evaluator's bins by hand (bin j keeps the comparator's winner of elements j, L + j, 2L + j ...),
// partial-reduce-expander's pad + reshape + variadic reduce keeping the evaluator's bits, the
// device against the evaluator, and located refusals of malformed calls.
#include "compiler/passes/partial_reduce_expander.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

// approx_max_k's form as JAX writes it for a TPU: (values, iota, -inf, -1), a GT comparator.
std::string MaxK(const std::string& x, const std::string& dims, int64_t dim, int64_t n,
                 int64_t bins, const std::string& config) {
  const std::string out =
      dim == 1 ? fmt::format("[{},{}]", 2, bins) : fmt::format("[{},{}]", bins, 3);
  return fmt::format(R"(HloModule m
gt {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}}
ENTRY e {{
  x = f32{0} {1}
  io = s32[{3}] iota(), iota_dimension=0
  ix = s32{0} broadcast(io), dimensions={{{2}}}
  init = f32[] constant(-inf)
  none = s32[] constant(-1)
  ROOT pr = (f32{4}, s32{4}) custom-call(x, ix, init, none), custom_call_target="PartialReduce", called_computations={{gt}}, backend_config={5}
}})",
                     dims, x, dim, n, out, config);
}

const char* kConfig = R"({"log2_reduction": 2, "reduction_dim": 1, "to_apply_type": )"
                      R"("comparator", "top_k": 2, "recall_target": 0.950000})";

TEST(PartialReduceExpanderTest, EachBinKeepsTheLargestOfItsStridedElements) {
  // n = 10 in L = 4 bins: bin j holds elements j, j + 4, j + 8 (< 10).
  const std::string text =
      MaxK("constant({{5, 1, 9, 3, 7, 8, 2, 4, 6, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}})", "[2,10]",
           1, 10, 4, kConfig);
  for (bool expanded : {false, true}) {
    auto m = testing::Parse(text);
    ASSERT_NE(m, nullptr);
    if (expanded) {
      auto changed = PartialReduceExpander().Run(*m);
      ASSERT_TRUE(changed.ok()) << changed.status().message();
      EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kCustomCall), 0);
      EXPECT_EQ(testing::CountInEntry(*m, hlo::HloOpcode::kReduce), 1);
    }
    hlo::Evaluator ev;
    auto r = ev.Evaluate(*m, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const std::vector<const hlo::Literal*> leaves = r->Leaves();
    ASSERT_EQ(leaves.size(), 2u);
    const std::vector<double> values = {7, 8, 9, 4, 8, 9, 6, 7};
    const std::vector<double> indices = {4, 5, 2, 7, 8, 9, 6, 7};
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(leaves[0]->GetAsDouble(static_cast<int64_t>(i)), values[i]) << expanded << i;
      EXPECT_EQ(leaves[1]->GetAsDouble(static_cast<int64_t>(i)), indices[i]) << expanded << i;
    }
  }
}

TEST(PartialReduceExpanderTest, ExpansionKeepsTheEvaluatorsBitsAndTheDeviceChecks) {
  // approx_min_k over dimension 0 (an LT comparator), n = 300 in 128 bins of up to 4 (padded).
  std::string text = MaxK("parameter(0)", "[300,3]", 0, 300, 128,
                          R"({"log2_reduction": 2, "reduction_dim": 0, "top_k": 5})");
  text.replace(text.find("direction=GT"), 12, "direction=LT");
  text.replace(text.find("constant(-inf)"), 14, "constant(inf)");
  PartialReduceExpander pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, text);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(testing::CountInEntry(*m, hlo::HloOpcode::kPad), 2);
  testing::CheckAgainstEvaluator(text, "tpu-v4", 0, 0);
}

TEST(PartialReduceExpanderTest, MalformedCallsAreLocatedErrors) {
  PartialReduceExpander pass;
  testing::ExpectRefused(pass, MaxK("parameter(0)", "[2,10]", 1, 10, 4, R"({"reduction_dim": 1})"),
                         "has no \"log2_reduction\"");
  testing::ExpectRefused(pass, MaxK("parameter(0)", "[2,10]", 1, 10, 2, kConfig),
                         "2 bins of 2^2 elements cannot hold dimension 1 of size 10");
  const std::string bad_dim = R"({"log2_reduction": 2, "reduction_dim": 7})";
  testing::ExpectRefused(pass, MaxK("parameter(0)", "[2,10]", 1, 10, 4, bad_dim),
                         "\"reduction_dim\" is 7");
  testing::ExpectRefused(pass, MaxK("parameter(0)", "[2,10]", 1, 10, 4, "\"2\""),
                         "not a JSON object");
}

}  // namespace
}  // namespace tpusim::compiler
