// A Pallas TPU kernel (custom-call tpu_custom_call) is timed from its declared cost_estimate
// (compiler/lower/lower_kernel_estimate.cc): its bytes through HBM, its FLOP on the MXUs and its
// transcendentals on the VPU, overlapped. These tests run such kernels on tpu-v5e (one TensorCore,
// so the core has the chip's HBM to itself) and check what a user reads off the report: the FLOP
// and bytes are the declared ones, the time is that of the busiest unit at its configured rate,
// and the run says it is timing-only and why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "compiler/compile.h"
#include "config/config_loader.h"
#include "config/derived.h"
#include "driver/run_module.h"
#include "driver/run_report.h"
#include "hlo/parser.h"
#include "sim/report/report.h"
#include "tests/hlo/pallas_kernel_module.h"

namespace tpusim::driver {
namespace {

using tpusim::testing::KernelModule;

struct KernelRun {
  uint64_t cycles = 0;
  uint64_t kernel_cycles = 0, kernel_flops = 0, kernel_hbm_bytes = 0;
  RunModuleResult result;
};

KernelRun RunKernel(const std::string& text) {
  auto module = hlo::ParseHloModule(text, "k.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  auto chip = config::LoadChipConfig("tpu-v5e", {});
  EXPECT_TRUE(chip.ok());
  auto r = RunModule(**module, *chip, RunOptions{});
  EXPECT_TRUE(r.ok()) << r.status().message();
  KernelRun k;
  k.cycles = r->sim.cycles.value();
  for (const sim::OpSummary& o : sim::SummarizeOps(r->sim, r->compiled.program)) {
    if (o.name != "pallas_call.1") continue;
    k.kernel_cycles = o.cycles;
    k.kernel_flops = o.flops;
    k.kernel_hbm_bytes = o.hbm_bytes;
  }
  k.result = std::move(*r);
  return k;
}

config::DerivedFigures V5e() {
  auto chip = config::LoadChipConfig("tpu-v5e", {});
  EXPECT_TRUE(chip.ok());
  return config::Derive(*chip);
}

// The operand probes (one f32 element of each of the two operands) are the only bytes beyond the
// declared ones.
constexpr uint64_t kProbeBytes = 2 * 4;

// Issue 21 round six: one-byte operand and result declaring 2^63 - 1 bytes make 2^62 one-byte
// steps; steps x MXUs (4 on tpu-v4) overflowed int64 before the 2^30-step cap was checked.
TEST(KernelEstimateTest, StepsPastTheCapAreRefusedBeforeTheyAreMultiplied) {
  auto module = hlo::ParseHloModule(R"(HloModule k
ENTRY main {
  x = s8[1]{0} parameter(0)
  ROOT k = s8[1]{0} custom-call(x), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"cost_estimate": {"bytes_accessed": 9223372036854775807, "flops": 0, "transcendentals": 0}}}
}
)",
                                    "k.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto chip = config::LoadChipConfig("tpu-v4", {});
  ASSERT_TRUE(chip.ok());
  auto compiled = compiler::Compile(**module, *chip, compiler::CompileOptions{});
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("k.hlo:4:8: error: %k (custom-call): cannot lower: "
                                             "Pallas TPU kernel: its cost_estimate needs "
                                             "4611686018427387904 steps"),
            std::string::npos)
      << compiled.status().message();
}

TEST(KernelEstimateTest, WithoutCostEstimateItIsALowerBoundTheReportNames) {
  std::string text = KernelModule(1, 0, 8);
  const size_t from = text.find(", \"cost_estimate\"");
  text.erase(from, text.find("}, \"serialization_format\"") + 1 - from);
  KernelRun k = RunKernel(text);
  ASSERT_EQ(k.result.compiled.cost_estimated_kernels.size(), 1u);
  EXPECT_FALSE(k.result.compiled.cost_estimated_kernels[0].declared);
  // Two f32[1024,1024] operands read and one result written once, no FLOP.
  EXPECT_EQ(k.kernel_hbm_bytes, 3u * 1024 * 1024 * 4 + kProbeBytes);
  EXPECT_EQ(k.kernel_flops, 0u);
  EXPECT_NE(RunReportText(k.result, "k.hlo").find("declares no cost_estimate: timed as a LOWER "
                                                  "BOUND"),
            std::string::npos);
  // The user-given cost wins for every Pallas kernel of the module.
  auto module = hlo::ParseHloModule(text, "k.hlo");
  auto chip = config::LoadChipConfig("tpu-v5e", {});
  ASSERT_TRUE(module.ok() && chip.ok());
  compiler::CompileOptions o;
  o.custom_call_cycles["tpu_custom_call"] = 1000;
  auto compiled = compiler::Compile(**module, *chip, o);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_TRUE(compiled->cost_estimated_kernels.empty());
  EXPECT_EQ(compiled->estimated_custom_calls.size(), 1u);
}

TEST(KernelEstimateTest, AnUnreadableDeclarationIsALocatedError) {
  std::string text = KernelModule(1, 0, 8);
  text.replace(text.find("\"flops\":1"), 9, "\"flops\":-1");
  auto module = hlo::ParseHloModule(text, "k.hlo");
  auto chip = config::LoadChipConfig("tpu-v5e", {});
  ASSERT_TRUE(module.ok() && chip.ok());
  auto r = compiler::Compile(**module, *chip, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("k.hlo:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("\"flops\" is -1"), std::string::npos);
}

TEST(KernelEstimateTest, HbmBoundKernelMovesItsBytesAtTheHbmRate) {
  const int64_t bytes = int64_t{256} << 20;
  KernelRun k = RunKernel(KernelModule(1 << 20, 0, bytes));
  EXPECT_TRUE(k.result.timing_only);
  EXPECT_NE(k.result.timing_only_reason.find("Pallas TPU kernel"), std::string::npos);
  EXPECT_EQ(k.kernel_hbm_bytes, static_cast<uint64_t>(bytes) + kProbeBytes);
  // The MXU rows are whole rows of a 128 x 128 tile: 2^20 FLOP = 32 rows exactly.
  EXPECT_EQ(k.kernel_flops, uint64_t{1} << 20);
  // At the configured bandwidth, plus what the DMA model charges a double-buffered stream: each
  // slot's next transfer starts one HBM latency after the last (about 7 % here, tpu-v5e).
  const double hbm_cycles = static_cast<double>(bytes) / V5e().hbm_bytes_per_cycle_per_core;
  EXPECT_GE(static_cast<double>(k.kernel_cycles), hbm_cycles);
  EXPECT_LE(static_cast<double>(k.kernel_cycles), 1.12 * hbm_cycles) << k.kernel_cycles;
}

TEST(KernelEstimateTest, MxuBoundKernelRunsItsFlopAtTheMxuRate) {
  const int64_t flops = int64_t{1} << 40;  // 2^40 / (2 * 128 * 128) = 2^25 rows over 4 MXUs
  KernelRun k = RunKernel(KernelModule(flops, 0, 8 << 20));
  EXPECT_EQ(k.kernel_flops, static_cast<uint64_t>(flops));
  const double peak_cycles = static_cast<double>(flops) / (4.0 * 128 * 128 * 2);
  EXPECT_GE(static_cast<double>(k.kernel_cycles), peak_cycles);
  EXPECT_LE(static_cast<double>(k.kernel_cycles), 1.02 * peak_cycles) << k.kernel_cycles;
  // Bounded program: the steps are a loop, not one instruction per step.
  EXPECT_LT(k.result.compiled.program.cores[0].instructions.size(), 200u);
}

TEST(KernelEstimateTest, TimeIsTheBusiestUnitsNotTheSum) {
  // The same bytes with and without MXU work that takes less time than the bytes: the kernel
  // takes (nearly) the same time, since the three units overlap.
  const int64_t bytes = int64_t{64} << 20;
  const double hbm_cycles = static_cast<double>(bytes) / V5e().hbm_bytes_per_cycle_per_core;
  const int64_t flops = static_cast<int64_t>(0.5 * hbm_cycles * 4 * 128 * 128 * 2);
  KernelRun alone = RunKernel(KernelModule(0, 0, bytes));
  KernelRun both = RunKernel(KernelModule(flops, 0, bytes));
  EXPECT_LE(static_cast<double>(both.kernel_cycles), 1.02 * alone.kernel_cycles)
      << alone.kernel_cycles << " " << both.kernel_cycles;
  // Transcendentals take the VPU's time: more of them than the HBM time can hide lengthen it.
  KernelRun exp_bound = RunKernel(KernelModule(0, int64_t{1} << 34, 1 << 20));
  EXPECT_GT(exp_bound.kernel_cycles, 4 * alone.kernel_cycles);
}

TEST(KernelEstimateTest, ReportListsTheKernelAndItsDeclaredCost) {
  KernelRun k = RunKernel(KernelModule(1 << 20, 3, 1 << 20));
  const Json j = RunReportJson(k.result, "k.hlo");
  const Json* kernels = j.Find("pallas_kernels");
  ASSERT_NE(kernels, nullptr);
  EXPECT_NE(j.Dump(0).find("\"bytes_accessed\":1048576"), std::string::npos) << j.Dump(0);
  const std::string text = RunReportText(k.result, "k.hlo");
  EXPECT_NE(text.find("Pallas kernel %pallas_call.1 timed from its cost_estimate"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tpusim::driver
