// Scoreboard (sim/core/scoreboard.h): RAW, WAR and WAW conflicts, the in-order accumulator chain
// and the streamed pop read, the oldest conflicting entry first, out-of-order removal; and random
// add/remove/check sequences against a direct model (a map from sequence number to footprint,
// each entry's writes then reads checked in entry order).
#include "sim/core/scoreboard.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

namespace tpusim::sim {
namespace {

isa::Footprint Fp(std::vector<isa::Region> reads, std::vector<isa::Region> writes) {
  return isa::Footprint{std::move(reads), std::move(writes)};
}

TEST(Scoreboard, HazardsAndOldestEntry) {
  Scoreboard sb;
  EXPECT_TRUE(sb.empty());
  sb.Add(3, Fp({isa::VmemRegion(0, 0, 64)}, {isa::VmemRegion(0, 256, 64)}));
  sb.Add(5, Fp({}, {isa::VmemRegion(0, 256, 64)}));
  sb.Add(9, Fp({}, {}));  // no regions: in flight, conflicts with nothing
  EXPECT_TRUE(sb.Contains(9));
  EXPECT_FALSE(sb.Contains(4));
  EXPECT_EQ(sb.FirstConflict(Fp({isa::VmemRegion(0, 300, 4)}, {})), 3u);  // RAW, oldest
  EXPECT_EQ(sb.FirstConflict(Fp({}, {isa::VmemRegion(0, 32, 4)})), 3u);   // WAR
  EXPECT_EQ(sb.FirstConflict(Fp({isa::VmemRegion(0, 32, 4)}, {})), Scoreboard::kNone);  // RAR
  EXPECT_EQ(sb.FirstConflict(Fp({isa::VmemRegion(1, 300, 4)}, {})), Scoreboard::kNone);  // core
  sb.Remove(3);
  EXPECT_EQ(sb.FirstConflict(Fp({}, {isa::VmemRegion(0, 260, 4)})), 5u);  // WAW
  EXPECT_EQ(sb.FirstConflict(Fp({}, {isa::VmemRegion(0, 32, 4)})), Scoreboard::kNone);
  sb.Remove(5);
  sb.Remove(9);
  EXPECT_TRUE(sb.empty());
}

TEST(Scoreboard, AccumulatorChainAndStreamedPop) {
  Scoreboard sb;
  sb.Add(1, Fp({}, {isa::AccRegion(0, 0, 0, 128, /*in_order_chain=*/true)}));
  // Another matmul into the same rows of the same MXU does not wait; one on MXU 1 is independent.
  EXPECT_EQ(sb.FirstConflict(Fp({}, {isa::AccRegion(0, 0, 0, 128, true)})), Scoreboard::kNone);
  // A pop streaming the rows out does not wait; a plain read of them does.
  EXPECT_EQ(sb.FirstConflict(Fp({isa::AccRegion(0, 0, 0, 128, false, true)}, {})),
            Scoreboard::kNone);
  EXPECT_EQ(sb.FirstConflict(Fp({isa::AccRegion(0, 0, 0, 128, false)}, {})), 1u);
  EXPECT_EQ(sb.FirstConflict(Fp({isa::AccRegion(0, 1, 0, 128, false)}, {})), Scoreboard::kNone);
}

TEST(Scoreboard, LargeFootprintAndCompaction) {
  // A footprint of more regions than the check's prefilter holds (scoreboard.cc kMaxKeys) is
  // checked region by region all the same; removing most entries compacts the arrays.
  Scoreboard sb;
  for (uint64_t seq = 0; seq < 40; ++seq) {
    sb.Add(seq, Fp({}, {isa::VmemRegion(0, seq * 64, 64)}));
  }
  std::vector<isa::Region> reads;
  for (uint64_t i = 0; i < 6; ++i) reads.push_back(isa::VmemRegion(0, 64 * 40 + i * 64, 64));
  EXPECT_EQ(sb.FirstConflict(Fp(reads, {})), Scoreboard::kNone);
  reads.push_back(isa::VmemRegion(0, 64 * 30 + 8, 4));
  reads.push_back(isa::VmemRegion(0, 64 * 33, 4));
  EXPECT_EQ(sb.FirstConflict(Fp(reads, {})), 30u);  // the oldest of 30 and 33
  for (uint64_t seq = 0; seq < 40; ++seq) {
    if (seq != 33) sb.Remove(seq);
  }
  EXPECT_EQ(sb.FirstConflict(Fp(reads, {})), 33u);
  EXPECT_TRUE(sb.Contains(33));
  sb.Remove(33);
  EXPECT_TRUE(sb.empty());
  EXPECT_EQ(sb.FirstConflict(Fp(reads, {})), Scoreboard::kNone);
}

// The scoreboard's rule written directly on a map of footprints.
uint64_t ModelConflict(const std::map<uint64_t, isa::Footprint>& entries,
                       const isa::Footprint& f) {
  for (const auto& [seq, e] : entries) {
    for (const isa::Region& w : e.writes) {
      for (const isa::Region& r : f.reads) {
        if (r.Overlaps(w) && !(r.result_stream && w.in_order_chain)) return seq;
      }
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(w)) return seq;
      }
    }
    for (const isa::Region& r : e.reads) {
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(r)) return seq;
      }
    }
  }
  return Scoreboard::kNone;
}

TEST(Scoreboard, MatchesModelOnRandomSequences) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&x](uint64_t bound) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % bound;
  };
  auto region = [&] {  // each draw in its own statement: a fixed order of next() calls
    const uint64_t kind = next(4), unit = next(2), at = next(64), size = next(96);
    const bool chain = next(2) == 0, stream = next(2) == 0;
    if (kind == 0) return isa::AccRegion(0, unit, at % 8 * 16, 16, chain, stream);
    return isa::VmemRegion(static_cast<int>(unit), at * 32, 1 + size);
  };
  auto footprint = [&] {
    isa::Footprint f;
    for (uint64_t i = next(3); i > 0; --i) f.reads.push_back(region());
    for (uint64_t i = next(3); i > 0; --i) f.writes.push_back(region());
    return f;
  };
  Scoreboard sb;
  std::map<uint64_t, isa::Footprint> model;
  uint64_t seq = 0, conflicts = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t op = next(3);
    if (op == 0 || model.empty()) {
      isa::Footprint f = footprint();
      sb.Add(seq, f);
      model.emplace(seq++, std::move(f));
    } else if (op == 1) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(next(model.size())));
      sb.Remove(it->first);
      model.erase(it);
    } else {
      const isa::Footprint f = footprint();
      const uint64_t want = ModelConflict(model, f);
      ASSERT_EQ(sb.FirstConflict(f), want) << "step " << step;
      conflicts += want != Scoreboard::kNone;
    }
    ASSERT_EQ(sb.empty(), model.empty());
  }
  EXPECT_GT(conflicts, 1000u);  // the sequence exercises conflicts, not only free issue
}

}  // namespace
}  // namespace tpusim::sim
