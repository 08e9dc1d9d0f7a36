// sim/core/mxu_unit.h on its own: the result path of mxu.pop (M rows one a cycle plus
// core.mxu.pop_latency_cycles, isa::MxuPopCycles; pops queue behind each other on the path, not in
// front of the array), a pop that reads the rows of a matmul still streaming them out, and the
// unit's counters. The array's own timing is tests/mxu's.
#include "sim/core/mxu_unit.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "isa/mxu_timing.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

struct Seen {
  Report::Kind kind;
  uint64_t seq;
  uint64_t cycle;
  bool operator==(const Seen&) const = default;
};

// One 8 x 8 MXU of the tiny chip (pop latency 2), timing only, stepped every cycle.
class MxuUnitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto u = MxuUnit::Create("core0.mxu0", 0, 0, chip_, MxuModelKind::kFast, nullptr, &errors_, 2,
                             stats_);
    ASSERT_TRUE(u.ok()) << u.status().message();
    unit_ = std::move(*u);
    unit_->set_reports(&reports_);
    unit_->set_attribution(&attribution_);
  }

  void SendAll(const std::string& text) {
    const isa::Program p = Asm(text);
    uint64_t seq = 1;
    for (const isa::Instruction& inst : p.cores[0].instructions) {
      unit_->commands().Send(Cycles(0), Command{seq, static_cast<int32_t>(seq - 1), inst});
      ++seq;
    }
  }

  std::vector<Seen> Run(uint64_t until) {
    std::vector<Seen> seen;
    for (uint64_t t = 0; t <= until; ++t) {
      unit_->Step(Cycles(t));
      while (reports_.HasReady(Cycles(t + 1))) {
        Report r = reports_.Pop(Cycles(t + 1));
        seen.push_back({r.kind, r.seq, r.cycle.value()});
      }
    }
    return seen;
  }

  static uint64_t DoneOf(const std::vector<Seen>& seen, uint64_t seq) {
    for (const Seen& s : seen) {
      if (s.kind == Report::Kind::kDone && s.seq == seq) return s.cycle;
    }
    ADD_FAILURE() << "no kDone for " << seq;
    return 0;
  }

  config::ChipConfig chip_ = TinyChip();
  ErrorSink errors_;
  StatRegistry stats_;
  Port<Report> reports_;
  StallAttribution attribution_;
  std::unique_ptr<MxuUnit> unit_;
};

// Two pops of rows no matmul writes: both are taken as they arrive (cycle 1); the first holds the
// result path for 16 cycles and is done 2 later; the second follows it on the path.
TEST_F(MxuUnitTest, PopsQueueOnTheResultPath) {
  ASSERT_EQ(chip_.core.mxu.pop_latency_cycles, 2);
  SendAll(R"(
mxu.pop mxu=0, acc=0, m=16, n=8, acc_dtype=f32, dst=0x0, stride=8, dtype=f32
mxu.pop mxu=0, acc=32, m=4, n=8, acc_dtype=f32, dst=0x1000, stride=8, dtype=f32
)");
  using K = Report::Kind;
  const std::vector<Seen> want = {
      {K::kStarted, 1, 1},
      {K::kStarted, 2, 1},
      {K::kDone, 1, 1 + isa::MxuPopCycles(16, 2)},       // 19
      {K::kDone, 2, 1 + 16 + isa::MxuPopCycles(4, 2)},   // 23
  };
  EXPECT_EQ(Run(100), want);
  EXPECT_EQ(stats_.Get("core0.mxu0", "pops"), 2u);
  EXPECT_EQ(stats_.Get("core0.mxu0", "pop_cycles"), 20u);
  EXPECT_EQ(stats_.Get("core0.mxu0", "vmem_bytes_written"), (16u + 4u) * 8u * 4u);
  EXPECT_FALSE(errors_.has_error());
}

// A pop of all 16 rows of a matmul moves row r once it is final (the array finishes one row a
// cycle, the last at the matmul's completion): it ends one cycle after the matmul's last result,
// plus the pop latency — though the sequencer sent it right behind the matmul.
TEST_F(MxuUnitTest, APopStreamsTheRowsOfTheMatmulStillWritingThem) {
  SendAll(R"(
mxu.load_weights mxu=0, addr=0x0, k=8, n=8, stride=8, dtype=bf16
mxu.matmul mxu=0, lhs=0x100, stride=8, m=16, k=8, n=8, dtype=bf16, acc=0, latch=1
mxu.pop mxu=0, acc=0, m=16, n=8, acc_dtype=f32, dst=0x1000, stride=8, dtype=f32
)");
  const std::vector<Seen> seen = Run(400);
  ASSERT_FALSE(errors_.has_error()) << errors_.status().message();
  const uint64_t matmul_done = DoneOf(seen, 2);
  EXPECT_EQ(DoneOf(seen, 3), matmul_done + 1 + 2);
  // The pop started (left the command queue) long before the matmul was done.
  for (const Seen& s : seen) {
    if (s.kind == Report::Kind::kStarted && s.seq == 3) {
      EXPECT_LT(s.cycle, matmul_done);
    }
  }
}

}  // namespace
}  // namespace tpusim::sim
