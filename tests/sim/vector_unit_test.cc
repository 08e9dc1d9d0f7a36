// sim/core/vector_unit.h on its own: a command is taken when it arrives and the unit is free
// (kStarted then), the next one waits for the previous occupancy, and each completes — its data
// effect applied, kDone sent — VectorCost::latency cycles after its start (isa/vpu_cost.h), in
// completion order. Values come from the ISA's one Execute (isa::ExecuteVector); a runtime error
// names the core, the instruction and the fault.
#include "sim/core/vector_unit.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "isa/memory_sizes.h"
#include "isa/vpu_cost.h"
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

// A vector unit of the tiny chip (VPU 8 x 128, ALU 2 cycles, transcendental 8, one vreg op a
// cycle, VMEM port 512 B/cycle) whose reports are collected, stepped every cycle up to `until`.
class VectorUnitTest : public ::testing::Test {
 protected:
  VectorUnitTest() : chip_(TinyChip()) {}

  void Build(bool with_values) {
    if (with_values) {
      auto s = isa::MachineState::Create(isa::MemorySizes::FromChipConfig(chip_), 1);
      ASSERT_TRUE(s.ok()) << s.status().message();
      state_ = std::make_unique<isa::MachineState>(std::move(*s));
    }
    unit_ = std::make_unique<VectorUnit>("core0.vpu", 0, chip_, state_.get(), &errors_, 3, stats_);
    unit_->set_reports(&reports_);
  }

  void Send(uint64_t at, uint64_t seq, int pc, const isa::Instruction& inst) {
    unit_->commands().Send(Cycles(at), Command{seq, pc, inst});
  }

  // Steps cycles [from, until] in order; the reports sent meanwhile.
  std::vector<Seen> Run(uint64_t from, uint64_t until) {
    std::vector<Seen> seen;
    for (uint64_t t = from; t <= until; ++t) {
      unit_->Step(Cycles(t));
      while (reports_.HasReady(Cycles(t + 1))) {
        Report r = reports_.Pop(Cycles(t + 1));
        seen.push_back({r.kind, r.seq, r.cycle.value()});
      }
    }
    return seen;
  }

  isa::VectorCost Cost(const isa::Instruction& inst) const {
    return isa::VectorInstructionCost(inst, chip_.core.vpu, chip_.core.vmem_bytes_per_cycle);
  }

  config::ChipConfig chip_;
  std::unique_ptr<isa::MachineState> state_;
  ErrorSink errors_;
  StatRegistry stats_;
  Port<Report> reports_;
  std::unique_ptr<VectorUnit> unit_;
};

// Two 4,096-element f32 adds (4 vreg ops, 48 KiB through the 512 B/cycle port: occupancy 96,
// latency 2 + 96 - 1 = 97) and a 1,024-element exp (8 KiB: occupancy 16, latency 8 + 16 - 1).
TEST_F(VectorUnitTest, StartsWhenFreeAndCompletesAfterTheLatency) {
  Build(false);
  const isa::Program p = Asm(R"(
vpu.binary op=add, dtype=f32, dst=0x0, a=0x10000, b=0x20000, rows=32, cols=128
vpu.binary op=add, dtype=f32, dst=0x30000, a=0x10000, b=0x20000, rows=32, cols=128
vpu.unary op=exp, dtype=f32, dst=0x40000, src=0x10000, count=1024
)");
  const auto& code = p.cores[0].instructions;
  const isa::VectorCost add = Cost(code[0]), exp = Cost(code[2]);
  ASSERT_EQ(add.occupancy.value(), 96u);
  ASSERT_EQ(add.latency.value(), 97u);
  ASSERT_EQ(exp.occupancy.value(), 16u);
  ASSERT_EQ(exp.latency.value(), 23u);
  Send(0, 10, 0, code[0]);  // arrives at 1
  Send(0, 11, 1, code[1]);
  Send(0, 12, 2, code[2]);
  const std::vector<Seen> seen = Run(0, 400);
  using K = Report::Kind;
  const std::vector<Seen> want = {
      {K::kStarted, 10, 1},   {K::kStarted, 11, 97},  {K::kDone, 10, 98},
      {K::kStarted, 12, 193}, {K::kDone, 11, 194},    {K::kDone, 12, 216},
  };
  EXPECT_EQ(seen, want);
  const StatGroup* g = stats_.Find("core0.vpu");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->Get("instructions"), 3u);
  EXPECT_EQ(g->Get("busy_cycles"), 96u + 96u + 16u);
  EXPECT_EQ(g->Get("elements"), 4096u + 4096u + 1024u);
  EXPECT_EQ(g->Get("flop"), 4096u + 4096u + 1024u);
  EXPECT_EQ(g->Get("vmem_bytes_read"), 2 * 2 * 4 * 4096u + 4 * 1024u);
  EXPECT_EQ(g->Get("vmem_bytes_written"), 2 * 4 * 4096u + 4 * 1024u);
  EXPECT_FALSE(errors_.has_error());
}

TEST_F(VectorUnitTest, NextWorkIsTheNextStartOrCompletion) {
  Build(false);
  const isa::Program p = Asm("vpu.fill dtype=f32, dst=0x0, count=1024, value=1\n");
  EXPECT_EQ(unit_->NextWork(Cycles(0)), kNever);  // nothing queued
  Send(0, 1, 0, p.cores[0].instructions[0]);
  EXPECT_EQ(unit_->NextWork(Cycles(0)), Cycles(1));  // the command's arrival
  unit_->Step(Cycles(1));
  const isa::VectorCost c = Cost(p.cores[0].instructions[0]);  // 4 KiB at 512 B/cycle: 8 + 1
  EXPECT_EQ(c.latency.value(), 2u + 8u - 1u);
  EXPECT_EQ(unit_->NextWork(Cycles(1)), Cycles(10));
}

// The data effect lands at completion, not at the start.
TEST_F(VectorUnitTest, TheResultIsWrittenWhenTheInstructionCompletes) {
  Build(true);
  const isa::Program p = Asm("vpu.fill dtype=s32, dst=0x100, count=4, value=7\n");
  Send(0, 1, 0, p.cores[0].instructions[0]);
  const uint64_t done = 1 + Cost(p.cores[0].instructions[0]).latency.value();
  auto read = [&] {
    int32_t v[4] = {};
    EXPECT_TRUE(state_->vmem(0).Read(0x100, v, sizeof v).ok());
    return std::vector<int32_t>(v, v + 4);
  };
  Run(0, done - 1);
  EXPECT_EQ(read(), (std::vector<int32_t>{0, 0, 0, 0}));
  Run(done, done);
  EXPECT_EQ(read(), (std::vector<int32_t>{7, 7, 7, 7}));
}

TEST_F(VectorUnitTest, ARuntimeErrorNamesCoreInstructionAndFault) {
  Build(true);
  // VMEM is 1 MiB on the tiny chip: a fill at 1 MiB - 4 of 4 s32 runs 12 bytes past its end.
  const isa::Program p = Asm("vpu.fill dtype=s32, dst=0xffffc, count=4, value=7\n");
  Send(0, 1, 5, p.cores[0].instructions[0]);
  Run(0, 100);
  ASSERT_TRUE(errors_.has_error());
  EXPECT_EQ(errors_.status().message().rfind("core 0 instruction 5 vpu.fill: ", 0), 0u)
      << errors_.status().message();
}

}  // namespace
}  // namespace tpusim::sim
