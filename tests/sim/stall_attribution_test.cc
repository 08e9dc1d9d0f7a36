// StallAttribution: flushing while the run lasts gives the totals of one overlay over the whole
// run.
#include "sim/core/stall_attribution.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

namespace tpusim::sim {
namespace {

// A deterministic pseudo-random core: contiguous retire segments and MXU intervals that start at
// or after the "current cycle" at which they are added (as the units add them).
struct Event {
  uint64_t now;
  bool segment;
  uint64_t start, end;
  int kind;  // segment: category; activity: MxuActivityKind
};

std::vector<Event> MakeEvents(uint64_t seed) {
  std::vector<Event> ev;
  uint64_t x = seed, frontier = 0;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (uint64_t now = 0; now < 4000; now += 1 + next() % 5) {
    if (next() % 3 == 0) {
      const uint64_t s = now + next() % 20;
      ev.push_back({now, false, s, s + 1 + next() % 40, static_cast<int>(next() % 3)});
    }
    if (next() % 2 == 0) {
      const uint64_t end = std::max(frontier, now + 1);
      ev.push_back({now, true, frontier, end, static_cast<int>(next() % kNumStallCategories)});
      frontier = end;
    }
  }
  return ev;
}

std::array<uint64_t, kNumStallCategories> Attribute(const std::vector<Event>& ev, uint64_t every) {
  StallAttribution a;
  uint64_t cycles = 0, last_now = 0;
  for (const Event& e : ev) {
    if (e.now != last_now && every > 0 && ++cycles % every == 0) a.Flush();  // between cycles
    last_now = e.now;
    if (e.segment) {
      a.AddSegment(e.start, e.end, static_cast<StallCategory>(e.kind));
    } else {
      a.AddActivity(static_cast<MxuActivityKind>(e.kind), e.start, e.end);
    }
  }
  a.Flush();
  return a.totals();
}

TEST(StallAttribution, FlushingOftenGivesTheTotalsOfOneFlush) {
  for (uint64_t seed : {1u, 7u, 99u}) {
    const std::vector<Event> ev = MakeEvents(seed);
    const auto once = Attribute(ev, 0);
    uint64_t covered = 0;
    for (const Event& e : ev) covered = e.segment ? e.end : covered;
    EXPECT_EQ(std::accumulate(once.begin(), once.end(), uint64_t{0}), covered);
    EXPECT_GT(once[static_cast<int>(StallCategory::kArrayActive)], 0u);
    for (uint64_t every : {1u, 2u, 17u})
      EXPECT_EQ(Attribute(ev, every), once) << seed << " " << every;
  }
}

TEST(StallAttribution, ActivityOverlapsInPriorityOrder) {
  StallAttribution a;
  a.AddActivity(MxuActivityKind::kWaiting, 0, 10);
  a.AddActivity(MxuActivityKind::kShifting, 2, 8);
  a.AddActivity(MxuActivityKind::kStreaming, 4, 6);
  a.AddSegment(0, 12, StallCategory::kHbmBound);
  a.Flush();
  EXPECT_EQ(a.totals()[static_cast<int>(StallCategory::kArrayActive)], 2u);
  EXPECT_EQ(a.totals()[static_cast<int>(StallCategory::kWeightShift)], 4u);
  EXPECT_EQ(a.totals()[static_cast<int>(StallCategory::kWeightStall)], 4u);
  EXPECT_EQ(a.totals()[static_cast<int>(StallCategory::kHbmBound)], 2u);
}

}  // namespace
}  // namespace tpusim::sim
