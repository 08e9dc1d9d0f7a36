// Many cores (issue 6): `tpusim run --scaling` (driver/scaling.h), the per-core collective
// report (run_module.h), and the ICI collectives against their closed forms.
#include "driver/scaling.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "driver/run_module.h"
#include "driver/run_report.h"
#include "hlo/parser.h"
#include "sim/run_and_check.h"
#include "sim/trace/trace_check.h"
#include "sim/trace/trace_writer.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::driver {
namespace {

constexpr char kMnist[] = "../shared/hlo/real/jax_mnist_pmap_train_step.hlo";

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

config::ChipConfig LoadConfig(const std::string& name) {
  auto c = config::LoadChipConfig(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : config::ChipConfig{};
}

TEST(ScalingTest, ParsesCoreCounts) {
  auto ok = ParseCoreCounts("1,2,4,8");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_FALSE(ParseCoreCounts("1,,2").ok());
  EXPECT_FALSE(ParseCoreCounts("0,2").ok());
  EXPECT_FALSE(ParseCoreCounts("4,2").ok());
  EXPECT_FALSE(ParseCoreCounts("2x").ok());
}

TEST(ScalingTest, SpeedupIsThroughputAndEfficiencyIsCycleRatio) {
  std::vector<ScalingRow> rows(2);
  rows[0].cores = 2;
  rows[0].cycles = 1000;
  rows[1].cores = 8;
  rows[1].cycles = 1250;
  ComputeSpeedups(rows);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].efficiency, 0.8);  // 1000 / 1250
  EXPECT_DOUBLE_EQ(rows[1].speedup, 3.2);     // (8 / 2) * 0.8
}

constexpr char kGroups[] = R"(HloModule m, replica_count=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %main (p0: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %p0), replica_groups=GROUPS, to_apply=%add
}
)";

std::string WithGroups(const std::string& groups) {
  std::string t = kGroups;
  t.replace(t.find("GROUPS"), 6, groups);
  return t;
}

TEST(ScalingTest, OneGroupOfEveryDeviceMeansAllReplicas) {
  auto m = Parse(WithGroups("{{0,1,2,3}}"));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RetargetReplicas(*m, 2, "test.hlo", "").ok());
  EXPECT_EQ(m->replica_count(), 2);
  const hlo::HloInstruction* ar = m->entry_computation()->root_instruction();
  EXPECT_TRUE(ar->replica_groups().groups.empty());
}

TEST(ScalingTest, SeveralGroupsFixTheCoreCount) {
  auto m = Parse(WithGroups("{{0,1},{2,3}}"));
  ASSERT_NE(m, nullptr);
  const std::string text = WithGroups("{{0,1},{2,3}}");
  Status s = RetargetReplicas(*m, 8, "test.hlo", text);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("test.hlo:9:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("runs only on 4 cores, not 8"), std::string::npos) << s.message();
  auto same = Parse(text);
  EXPECT_TRUE(RetargetReplicas(*same, 4, "test.hlo", text).ok());
}

// The PyTorch data-parallel step (replica_groups={}) runs on 1, 2 and 4 cores of a v2-8, checked
// against the evaluator each time; the all-reduce shows up as ici_bound time and link bytes.
TEST(ScalingTest, PyTorchDataParallelStepScales) {
  auto text = ReadFile("tests/data/hlo/pt_mini_mlp_train_dp.hlo");
  ASSERT_TRUE(text.ok()) << text.status().message();
  const config::ChipConfig chip = LoadConfig("tpu-v2-8");
  std::vector<ScalingRow> rows;
  for (int64_t cores : {1, 2, 4}) {
    auto m = Parse(*text);
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(RetargetReplicas(*m, cores, "pt", *text).ok());
    RunOptions o;
    o.replicas = cores;
    auto r = RunModule(*m, chip, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->check.performed && r->check.passed) << r->check.reason;
    EXPECT_EQ(r->replicas, cores);
    rows.push_back(ScalingRowOf(*r));
    const Json j = RunReportJson(*r, "pt");
    const Json* coll = j.Find("collectives");
    ASSERT_NE(coll, nullptr);
    ASSERT_EQ(coll->Find("per_core")->array().size(), static_cast<size_t>(cores));
  }
  ComputeSpeedups(rows);
  EXPECT_LT(rows[0].collective_cycles, 100u);  // one core: the all-reduce is a local copy
  EXPECT_GT(rows[1].collective_cycles, 1000u);
  EXPECT_GT(rows[2].collective_cycles, rows[1].collective_cycles);  // more ring steps
  EXPECT_GT(rows[2].cycles, rows[0].cycles);  // weak scaling: efficiency below 1
  EXPECT_LT(rows[2].efficiency, 1.0);
  EXPECT_GT(rows[2].speedup, 1.0);
  const Json a = ScalingJson(rows);
  ASSERT_EQ(a.array().size(), 3u);
  EXPECT_NE(a.Dump().find("\"efficiency\""), std::string::npos);
}

// The JAX MNIST data-parallel step on a TPU v2-8 on 1 and 8 cores: checked, and on 8 cores the
// gradient all-reduces are ici.all_reduce events in the trace while a lone core has none over ICI.
TEST(ScalingTest, MnistStepOnOneAndEightCoresShowsTheAllReduceInTheTrace) {
  if (!std::filesystem::exists(kMnist)) GTEST_SKIP() << kMnist << " is absent (not licensed here)";
  auto text = ReadFile(kMnist);
  ASSERT_TRUE(text.ok());
  const config::ChipConfig chip = LoadConfig("tpu-v2-8");
  uint64_t cycles[2] = {0, 0}, ici_events[2] = {0, 0};
  int i = 0;
  for (int64_t cores : {1, 8}) {
    auto m = Parse(*text);
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(RetargetReplicas(*m, cores, kMnist, *text).ok());
    RunOptions o;
    o.replicas = cores;
    std::ostringstream trace_out;
    sim::TraceWriter writer(trace_out, {});
    o.sim.trace_sink = &writer;
    auto r = RunModule(*m, chip, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->check.performed && r->check.passed) << r->check.reason;
    cycles[i] = r->sim.cycles.value();
    const std::string trace = trace_out.str();
    auto valid = sim::CheckChromeTrace(trace);
    EXPECT_TRUE(valid.ok()) << valid.status().message();
    for (size_t p = trace.find("ici.all_reduce"); p != std::string::npos;
         p = trace.find("ici.all_reduce", p + 1)) {
      ++ici_events[i];
    }
    if (cores == 8) {
      const Json j = RunReportJson(*r, kMnist);
      const Json& c0 = j.Find("collectives")->Find("per_core")->array()[0];
      const std::string s = c0.Dump();
      EXPECT_NE(s.find("\"collective_cycles\""), std::string::npos);
    }
    ++i;
  }
  EXPECT_GT(ici_events[1], 0u);
  EXPECT_GT(ici_events[1], ici_events[0]);
  EXPECT_GT(cycles[1], cycles[0]);  // the 8-core step pays for the ring all-reduces
}

// Ring all-gather of S = n * count * 4 bytes over n cores: each core sends (n-1) chunks of S/n,
// half of each over its + link and half over its - link (the bidirectional ring): (n-1)/n * S / B +
// (n-1) * hop latency (tiny ring: 16 B/cycle per link direction, so B = 32; 50 cycles per hop).
TEST(ScalingTest, RingAllGatherMatchesTheFormula) {
  const int n = 4;
  const config::ChipConfig chip = sim::testing::TinyChip(n);
  const uint64_t count = 16 << 10;   // f32 elements per rank
  const uint64_t S = n * count * 4;  // gathered bytes
  std::string text = ".replica_groups 0 {0,1,2,3}\n";
  for (int c = 0; c < n; ++c) {
    text += ".core " + std::to_string(c) +
            "\nici.all_gather dtype=f32, space=vmem, src=0, dst=" + std::to_string(count * 4) +
            ", count=" + std::to_string(count) + ", group=0\nctrl.halt\n";
  }
  isa::Program p = sim::testing::Asm(text);
  std::mt19937_64 rng(5);
  for (int c = 0; c < n; ++c) {
    p.data.push_back(sim::testing::F32Segment(isa::MemSpace::kVmem, c, 0,
                                              sim::testing::RandomFloats(rng, count)));
  }
  auto r = sim::RunAndCheck(chip, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double formula = (n - 1.0) / n * static_cast<double>(S) / 32.0 + (n - 1.0) * 50;
  const double got = static_cast<double>(r->cycles.value());
  EXPECT_NEAR(got / formula, 1.0, 0.05) << got << " vs " << formula;
  std::printf("all-gather: %.0f cycles, formula %.0f\n", got, formula);
  EXPECT_EQ(*r->stats->Get("chip0.ici.x+", "bytes"), (n - 1) * (S / 2) / n);
  EXPECT_EQ(*r->stats->Get("chip0.ici.x-", "bytes"), (n - 1) * (S / 2) / n);
}

// spmd-partitioner triage: tiled shardings in an unpartitioned module are refused with the
// instruction and its sharding; {replicated} and already-partitioned modules compile.
TEST(ScalingTest, UnpartitionedTiledShardingIsPartitioned) {
  constexpr char kTiled[] = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8,16], w: f32[16,32]) -> f32[8,32] {
  %x = f32[8,16]{1,0} parameter(0), sharding={replicated}
  %w = f32[16,32]{1,0} parameter(1), sharding=SHARDING
  ROOT %dot = f32[8,32]{1,0} dot(f32[8,16]{1,0} %x, f32[16,32]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  const config::ChipConfig chip = LoadConfig("tpu-v2-8");
  std::string tiled = kTiled;
  tiled.replace(tiled.find("SHARDING"), 8, "{devices=[1,2]0,1}");
  auto m = Parse(tiled);
  ASSERT_NE(m, nullptr);
  // tpusim's SPMD partitioner splits the weight's columns: two cores, each with a [16,16] shard.
  auto c = compiler::Compile(*m, chip);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->program.num_cores(), 2);
  ASSERT_TRUE(c->spmd.has_value());
  for (const compiler::BufferPlacement& p : c->parameters) {
    if (p.parameter_number == 1) {
      EXPECT_EQ(p.shape.dimensions(), (std::vector<int64_t>{16, 16}));
    }
  }
  std::string replicated = kTiled;
  replicated.replace(replicated.find("SHARDING"), 8, "{replicated}");
  auto r = Parse(replicated);
  ASSERT_NE(r, nullptr);
  auto rc = compiler::Compile(*r, chip);
  ASSERT_TRUE(rc.ok()) << rc.status().message();
  EXPECT_EQ(rc->program.num_cores(), 2);
  auto text = ReadFile("tests/data/hlo/pt_spmd_linear_megatron.hlo");
  ASSERT_TRUE(text.ok());
  auto meg = Parse(*text);
  ASSERT_NE(meg, nullptr);
  auto mc = compiler::Compile(*meg, chip);
  EXPECT_TRUE(mc.ok()) << mc.status().message();
}

}  // namespace
}  // namespace tpusim::driver
