// The simulator on the shipped configs (configs/*.yaml through the config loader): a v4-8 slice
// (2x2x1 torus of 2-core megacore chips) all-reduces over its 8 cores with values equal to the
// interpreter's, and a v2-8 slice (per-core HBM halves) does the same.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "config/config_loader.h"
#include "sim/run_and_check.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

class ShippedConfigTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ShippedConfigTest, EightCoreAllReduceMatchesTheInterpreter) {
  auto config = config::LoadChipConfig(std::string("configs/") + GetParam() + ".yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->total_cores(), 8);
  std::string text = ".replica_groups 0 {0,1,2,3,4,5,6,7}\n";
  const uint64_t count = 8192;
  for (int c = 0; c < 8; ++c) {
    text += ".core " + std::to_string(c) +
            "\nici.all_reduce op=sum, dtype=f32, space=hbm, src=0, dst=65536, count=" +
            std::to_string(count) + ", group=0\nctrl.halt\n";
  }
  isa::Program p = testing::Asm(text);
  std::mt19937_64 rng(9);
  // With a shared HBM the chip's two cores would read each other's inputs: give each its own range.
  for (int c = 0; c < 8; ++c) {
    p.cores[c].instructions[0].fields[isa::FieldIndex(isa::Opcode::kIciAllReduce, "src")] =
        static_cast<uint64_t>(c) * 131072;
    p.cores[c].instructions[0].fields[isa::FieldIndex(isa::Opcode::kIciAllReduce, "dst")] =
        static_cast<uint64_t>(c) * 131072 + 65536;
    p.data.push_back(testing::F32Segment(isa::MemSpace::kHbm, c, static_cast<uint64_t>(c) * 131072,
                                         testing::RandomFloats(rng, count)));
  }
  auto r = RunAndCheck(*config, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Both slices are 2 x 2 chips of 2 cores: a 4-core ring along x (each chip's two cores
  // consecutive), then 2-rings along y (system.ici.dimension_rings) — 2 x 3 + 2 x 1 = 8 steps,
  // each at least one hop latency.
  EXPECT_GE(r->cycles.value(), static_cast<uint64_t>(8 * config->system.ici_hop_latency_cycles));
  uint64_t ici_bytes = 0;
  for (const std::string& link : r->ici_links) ici_bytes += *r->stats->Get(link, "bytes");
  EXPECT_GT(ici_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Configs, ShippedConfigTest, ::testing::Values("tpu-v4-8", "tpu-v2-8"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s) ch = ch == '-' ? '_' : ch;
                           return s;
                         });

}  // namespace
}  // namespace tpusim::sim
