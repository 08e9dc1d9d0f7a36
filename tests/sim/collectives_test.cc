// The report's collectives section (sim/report/collectives.h) on a ring all-reduce: per core the
// ICI-bound cycles and the rest add up to the core's cycles, per link the bytes the statistics
// counted and the bandwidth while busy.
#include "sim/report/collectives.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

StatusOr<SimResult> AllReduceOnFourChips() {
  const int n = 4;
  std::string text = ".replica_groups 0 {0,1,2,3}\n";
  for (int c = 0; c < n; ++c) {
    text += ".core " + std::to_string(c) +
            "\nici.all_reduce op=sum, dtype=f32, space=vmem, src=0, dst=0, count=4096, group=0\n"
            "ctrl.halt\n";
  }
  isa::Program p = testing::Asm(text);
  std::mt19937_64 rng(3);
  for (int c = 0; c < n; ++c) {
    p.data.push_back(
        testing::F32Segment(isa::MemSpace::kVmem, c, 0, testing::RandomFloats(rng, 4096)));
  }
  return Simulator(testing::TinyChip(n)).Run(p);
}

// A member of a JSON object, read back from its text (Json is write-only).
uint64_t UintOf(const Json& j, const char* key) { return std::stoull(j.Find(key)->Dump(0)); }
std::string TextOf(const Json& j, const char* key) {
  const std::string quoted = j.Find(key)->Dump(0);
  return quoted.substr(1, quoted.size() - 2);
}

TEST(CollectiveReportTest, BusyBandwidthIsBytesOverBusyTime) {
  EXPECT_DOUBLE_EQ(BusyBandwidthBytesPerSecond(1000, 10, 1e9), 1e11);
  EXPECT_EQ(BusyBandwidthBytesPerSecond(1000, 0, 1e9), 0.0);
}

TEST(CollectiveReportTest, CoresSplitTheirCyclesAndLinksCarryTheStatisticsBytes) {
  auto r = AllReduceOnFourChips();
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Json j = CollectiveReportJson(*r);
  const Json::Array& cores = j.Find("per_core")->array();
  ASSERT_EQ(cores.size(), 4u);
  for (const Json& c : cores) {
    EXPECT_EQ(UintOf(c, "collective_cycles") + UintOf(c, "compute_cycles"), UintOf(c, "cycles"));
    EXPECT_GT(UintOf(c, "collective_cycles"), 0u);  // the core waits on the ring
    EXPECT_GT(UintOf(c, "ici_bytes_sent"), 0u);
    EXPECT_EQ(UintOf(c, "collectives"), 1u);
  }
  const Json::Array& links = j.Find("links")->array();
  ASSERT_EQ(links.size(), r->ici_links.size());
  uint64_t total = 0;
  for (const Json& l : links) {
    const std::string path = TextOf(l, "link");
    const uint64_t bytes = UintOf(l, "bytes"), busy = UintOf(l, "busy_cycles");
    EXPECT_EQ(bytes, r->stats->Get(path, "bytes").value_or(0)) << path;
    EXPECT_EQ(l.Find("busy_bandwidth_bytes_per_s")->Dump(0),
              Json(BusyBandwidthBytesPerSecond(bytes, busy, r->clock_hz)).Dump(0));
    EXPECT_EQ(l.Find("average_bandwidth_bytes_per_s")->Dump(0),
              Json(static_cast<double>(bytes) / r->seconds()).Dump(0));
    total += bytes;
  }
  // A ring all-reduce sends 2(n-1)/n of the 16 KiB array from every chip.
  EXPECT_EQ(total, 4u * 2 * 3 * (4096 * 4) / 4);
  const std::string text = CollectiveReportText(*r);
  EXPECT_NE(text.find("collectives vs compute"), std::string::npos);
  EXPECT_NE(text.find("chip0.ici.x+"), std::string::npos) << text;
}

TEST(CollectiveReportTest, OneCoreWithoutLinksHasNoTable) {
  auto r = Simulator(testing::TinyChip()).Run(testing::Asm("ctrl.halt\n"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(CollectiveReportText(*r), "");
  EXPECT_EQ(CollectiveReportJson(*r).Find("per_core")->array().size(), 1u);
}

}  // namespace
}  // namespace tpusim::sim
