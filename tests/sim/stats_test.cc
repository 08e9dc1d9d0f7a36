// sim/engine/stats.h: counters grouped by unit path, looked up by path and name, flattened and
// summed for reports, and snapshotted / scaled for fast-forward (Values, AddTimes).
#include "sim/engine/stats.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tpusim::sim {
namespace {

TEST(StatsTest, CountersAreFoundByPathAndName) {
  StatRegistry reg;
  StatGroup& g = reg.AddGroup("chip0.core0.vpu");
  Counter* busy = g.Add("busy_cycles", StatUnit::kCycles, "cycles issuing");
  Counter* ops = g.Add("instructions", StatUnit::kCount, "instructions");
  busy->Add(5);
  busy->Add(7);
  ops->Add(1);
  EXPECT_EQ(busy->value(), 12u);
  EXPECT_EQ(reg.Get("chip0.core0.vpu", "busy_cycles"), 12u);
  EXPECT_EQ(g.Get("instructions"), 1u);
  EXPECT_EQ(reg.Get("chip0.core0.vpu", "nope"), std::nullopt);
  EXPECT_EQ(reg.Get("chip0.core1.vpu", "busy_cycles"), std::nullopt);
  EXPECT_EQ(reg.Find("chip0.core1.vpu"), nullptr);
  ASSERT_EQ(g.stats().size(), 2u);
  EXPECT_EQ(g.stats()[0].name, "busy_cycles");
  EXPECT_EQ(g.stats()[0].unit, StatUnit::kCycles);
  EXPECT_EQ(g.stats()[0].description, "cycles issuing");
  EXPECT_EQ(g.stats()[0].counter, busy);
}

TEST(StatsTest, CounterPointersStayValidAsGroupsAndCountersAreAdded) {
  StatRegistry reg;
  Counter* first = reg.AddGroup("a").Add("x", StatUnit::kBytes, "");
  for (int i = 0; i < 100; ++i) {
    StatGroup& g = reg.AddGroup(fmt::format("g{}", i));
    for (int j = 0; j < 10; ++j) g.Add(fmt::format("c{}", j), StatUnit::kCount, "");
  }
  first->Add(3);
  EXPECT_EQ(reg.Get("a", "x"), 3u);
  EXPECT_EQ(reg.groups().size(), 101u);
  EXPECT_EQ(reg.groups().front().path(), "a");  // registration order
}

TEST(StatsTest, FlattenIsSortedAndSumMatchesPrefixAndSuffix) {
  StatRegistry reg;
  for (const char* path : {"chip0.core1.mxu0", "chip0.core0.mxu0", "chip0.core0.mxu1",
                           "chip1.core0.mxu0", "chip0.core0.vpu"}) {
    reg.AddGroup(path).Add("busy_cycles", StatUnit::kCycles, "")->Add(path[4] == '0' ? 10 : 100);
  }
  const std::map<std::string, uint64_t> flat = reg.Flatten();
  ASSERT_EQ(flat.size(), 5u);
  EXPECT_EQ(flat.begin()->first, "chip0.core0.mxu0.busy_cycles");
  EXPECT_EQ(flat.at("chip1.core0.mxu0.busy_cycles"), 100u);
  // Every group of chip 0 (three MXUs and the VPU); the mxu0 groups; one VPU by its suffix.
  EXPECT_EQ(reg.Sum("chip0.", "", "busy_cycles"), 40u);
  EXPECT_EQ(reg.Sum("chip0.", "mxu0", "busy_cycles"), 20u);
  EXPECT_EQ(reg.Sum("", "mxu0", "busy_cycles"), 120u);
  EXPECT_EQ(reg.Sum("chip0.core0", ".vpu", "busy_cycles"), 10u);
  EXPECT_EQ(reg.Sum("", "", "no_such_counter"), 0u);
}

// Fast-forward: the counters' change over one period, times the periods skipped.
TEST(StatsTest, ValuesAndAddTimesScaleEveryCounterInRegistrationOrder) {
  StatRegistry reg;
  StatGroup& a = reg.AddGroup("a");
  Counter* a1 = a.Add("one", StatUnit::kCount, "");
  Counter* a2 = a.Add("two", StatUnit::kBytes, "");
  Counter* b1 = reg.AddGroup("b").Add("one", StatUnit::kFlop, "");
  a1->Add(1);
  a2->Add(20);
  b1->Add(300);
  EXPECT_EQ(reg.Values(), (std::vector<uint64_t>{1, 20, 300}));
  reg.AddTimes({2, 0, 5}, 1000);
  EXPECT_EQ(reg.Values(), (std::vector<uint64_t>{2001, 20, 5300}));
}

TEST(StatsTest, UnitNames) {
  EXPECT_STREQ(StatUnitName(StatUnit::kCycles), "cycles");
  EXPECT_STREQ(StatUnitName(StatUnit::kBytes), "bytes");
  EXPECT_STREQ(StatUnitName(StatUnit::kFlop), "FLOP");
  EXPECT_STREQ(StatUnitName(StatUnit::kCount), "count");
}

}  // namespace
}  // namespace tpusim::sim
