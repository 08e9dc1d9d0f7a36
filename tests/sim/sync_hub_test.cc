// The SyncHub (sim/chip/sync_hub.cc): collectives rendezvous in their own member sets — groupings
// that interleave wait for each other — and members of one set that disagree are an error.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

#include "sim/run_and_check.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

// The simulator's SyncHub, like the interpreter, lets groupings interleave: core 1 reaches its
// second {0,1} all-reduce while core 0 still waits in {0,2}. Values checked against the
// interpreter (RunAndCheck).
TEST(SyncHubTest, InterleavedReplicaGroupsRendezvousInTheirOwnGroups) {
  std::string text = ".replica_groups 0 {0,1}, {2,3}\n.replica_groups 1 {0,2}, {1,3}\n";
  for (int c = 0; c < 4; ++c) {
    text += ".core " + std::to_string(c) + "\n";
    for (auto [g, src, dst] : {std::tuple{0, 0, 256}, {1, 256, 512}, {0, 512, 768}}) {
      text += fmt::format("ici.all_reduce op=sum, dtype=f32, space=vmem, src={}, dst={}, "
                          "count=64, group={}\n", src, dst, g);
    }
    text += "ctrl.halt\n";
  }
  isa::Program p = Asm(text);
  std::mt19937_64 rng(11);
  for (int c = 0; c < 4; ++c) {
    p.data.push_back(
        testing::F32Segment(isa::MemSpace::kVmem, c, 0, testing::RandomFloats(rng, 64)));
  }
  auto r = RunAndCheck(TinyChip(4), p);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

TEST(SyncHubTest, MembersOfOneSetThatDisagreeAreAnError) {
  isa::Program p = Asm(R"(
.replica_groups 0 {0,1}
.core 0
ici.all_reduce op=sum, dtype=f32, space=vmem, src=0, dst=256, count=4, group=0
ctrl.halt
.core 1
ici.all_reduce op=sum, dtype=f32, space=vmem, src=0, dst=256, count=8, group=0
ctrl.halt
)");
  auto r = RunAndCheck(TinyChip(2), p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("collective mismatch"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace tpusim::sim
