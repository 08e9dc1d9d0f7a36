// sim/core/collective_unit.h on the tiny chip's ring (16 B/cycle per link direction, 50 cycles a
// hop), with values checked against the interpreter (RunAndCheck): a reduce-scatter and an
// all-gather are each one half of the ring all-reduce — (n-1)/n * S / B + (n-1) hops, B the two
// directions' 32 B/cycle — and together take what one all-reduce of the same bytes takes
// (closed_form_test.cc pins the all-reduce itself); a collective over one core costs no ICI.
#include "sim/core/collective_unit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sim/run_and_check.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

// `body(c)` on each of n cores of an n-chip ring, group {0..n-1}; random f32 inputs of `elements`
// at VMEM 0 of every core.
StatusOr<SimResult> OnRing(int n, uint64_t elements, const std::string& body) {
  std::vector<int> members(static_cast<size_t>(n));
  for (int c = 0; c < n; ++c) members[static_cast<size_t>(c)] = c;
  std::string text = fmt::format(".replica_groups 0 {{{}}}\n", fmt::join(members, ","));
  for (int c = 0; c < n; ++c) text += fmt::format(".core {}\n{}ctrl.halt\n", c, body);
  isa::Program p = Asm(text);
  std::mt19937_64 rng(7);
  for (int c = 0; c < n; ++c) {
    p.data.push_back(
        testing::F32Segment(isa::MemSpace::kVmem, c, 0, testing::RandomFloats(rng, elements)));
  }
  return RunAndCheck(TinyChip(n), p);
}

TEST(CollectiveUnitTest, ReduceScatterAndAllGatherAreTheTwoHalvesOfAnAllReduce) {
  const int n = 4;
  const uint64_t count = 16 << 10;  // elements per rank: S = n * count * 4 = 256 KiB per core
  const uint64_t S = n * count * 4;
  auto rs = OnRing(n, n * count,
                   fmt::format("ici.reduce_scatter op=sum, dtype=f32, space=vmem, src=0x0, "
                               "dst=0x40000, count={}, group=0\n",
                               count));
  auto ag = OnRing(n, count,
                   fmt::format("ici.all_gather dtype=f32, space=vmem, src=0x0, dst=0x40000, "
                               "count={}, group=0\n",
                               count));
  auto ar = OnRing(n, n * count,
                   fmt::format("ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, "
                               "count={}, group=0\n",
                               n * count));
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  ASSERT_TRUE(ag.ok()) << ag.status().message();
  ASSERT_TRUE(ar.ok()) << ar.status().message();
  const double half = (n - 1.0) / n * static_cast<double>(S) / 32.0 + (n - 1) * 50.0;
  EXPECT_NEAR(static_cast<double>(rs->cycles.value()) / half, 1.0, 0.05) << rs->cycles.value();
  EXPECT_NEAR(static_cast<double>(ag->cycles.value()) / half, 1.0, 0.05) << ag->cycles.value();
  EXPECT_NEAR(static_cast<double>(rs->cycles.value() + ag->cycles.value()) /
                  static_cast<double>(ar->cycles.value()),
              1.0, 0.05);
  // Each link direction carried (n-1) chunks of (S/2)/n bytes in each half.
  EXPECT_EQ(*rs->stats->Get("chip0.ici.x+", "bytes"), (n - 1) * (S / 2) / n);
  EXPECT_EQ(*ag->stats->Get("chip0.ici.x-", "bytes"), (n - 1) * (S / 2) / n);
}

TEST(CollectiveUnitTest, AOneCoreGroupMovesNothingOverIci) {
  auto r = OnRing(1, 1024,
                  "ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1024, "
                  "group=0\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LT(r->cycles.value(), 50u);  // not one hop's latency
}

}  // namespace
}  // namespace tpusim::sim
