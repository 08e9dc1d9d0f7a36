// hlo/kernel_cost_estimate.h: the cost a Pallas TPU kernel (custom-call tpu_custom_call)
// declares in its backend_config, read as XLA's TPU backend reads it; the bad declarations named;
// and the lower bound a kernel without a declaration is timed by.
#include "hlo/kernel_cost_estimate.h"

#include <gtest/gtest.h>

#include <string>

#include "hlo/cost_analysis.h"
#include "hlo/parser.h"
#include "tests/hlo/pallas_kernel_module.h"

namespace tpusim::hlo {
namespace {

using tpusim::testing::KernelModule;

TEST(KernelCostEstimateTest, ReadsWhatPallasCallDeclares) {
  auto module = ParseHloModule(KernelModule(131072, 7, 1572864), "k.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloInstruction* kernel = (*module)->entry_computation()->root_instruction();
  ASSERT_TRUE(IsMosaicKernel(*kernel));
  auto e = ReadKernelCostEstimate(*kernel);
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE(e->has_value());
  EXPECT_EQ((*e)->flops, 131072);
  EXPECT_EQ((*e)->transcendentals, 7);
  EXPECT_EQ((*e)->bytes_accessed, 1572864);
  EXPECT_EQ((*e)->remote_bytes, 0);
  // XLA's TPU cost analysis counts the declared figures, not "unknown".
  const ModuleCost cost = AnalyzeCost(**module);
  EXPECT_EQ(cost.total.flops, 131072);
  EXPECT_EQ(cost.total.transcendentals, 7);
  EXPECT_EQ(cost.total.bytes_accessed, 1572864);
  EXPECT_TRUE(cost.unknown_flops.empty());
}

TEST(KernelCostEstimateTest, BadDeclarationsAreNamed) {
  const std::string base = KernelModule(1, 2, 3);
  const auto error_of = [](const std::string& text) -> std::string {
    auto module = ParseHloModule(text, "k.hlo");
    if (!module.ok()) return "parse: " + module.status().message();
    auto e = ReadKernelCostEstimate(*(*module)->entry_computation()->root_instruction());
    return e.ok() ? "" : e.status().message();
  };
  std::string negative = base;
  negative.replace(negative.find("\"flops\":1"), 9, "\"flops\":-1");
  EXPECT_NE(error_of(negative).find("\"flops\" is -1"), std::string::npos) << error_of(negative);
  std::string text_figure = base;
  text_figure.replace(text_figure.find("\"flops\":1"), 9, "\"flops\":\"1\"");
  EXPECT_NE(error_of(text_figure).find("expected an integer"), std::string::npos);
  std::string missing = base;
  missing.replace(missing.find("\"flops\":1,"), 10, "");
  EXPECT_NE(error_of(missing).find("no \"flops\""), std::string::npos) << error_of(missing);
  std::string broken = base;
  broken.replace(broken.find("\"serialization_format\": 1"), 25, "\"serialization_format\" 1");
  EXPECT_NE(error_of(broken).find("backend_config is not JSON: parse error at line"),
            std::string::npos)
      << error_of(broken);
}

// Without a declaration: the operands read and the result written once, no FLOP. By hand:
// f32[4,8] (128 bytes) and s8[16] (16 bytes) in, bf16[2,3] (12 bytes) out: 156 bytes. A
// custom-call of another target is not a Mosaic kernel.
TEST(KernelCostEstimateTest, LeastCostIsTheOperandsReadAndTheResultWrittenOnce) {
  auto module = ParseHloModule(R"(HloModule k
ENTRY e {
  a = f32[4,8] parameter(0)
  b = s8[16] parameter(1)
  k = bf16[2,3] custom-call(a, b), custom_call_target="tpu_custom_call"
  ROOT o = bf16[2,3] custom-call(a, b), custom_call_target="other"
}
)",
                               "k.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloInstruction* k = (*module)->entry_computation()->FindInstruction("k");
  const HloInstruction* o = (*module)->entry_computation()->root_instruction();
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(IsMosaicKernel(*k));
  EXPECT_FALSE(IsMosaicKernel(*o));
  const KernelCostEstimate least = LeastKernelCost(*k);
  EXPECT_EQ(least.bytes_accessed, 156);
  EXPECT_EQ(least.flops, 0);
  EXPECT_EQ(least.transcendentals, 0);
  auto declared = ReadKernelCostEstimate(*k);  // no backend_config: nothing declared
  ASSERT_TRUE(declared.ok()) << declared.status().message();
  EXPECT_FALSE(declared->has_value());
}

}  // namespace
}  // namespace tpusim::hlo
