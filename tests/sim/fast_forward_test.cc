// Exact fast-forward of repeated loop trips (sim/fast_forward.h): a fast-forwarded run gives every
// statistic of the full simulation — cycles, every counter, each core's stall attribution and
// per-instruction profile — on loops with DMA, MXU, VPU and ICI work, and skips trips.
#include "sim/fast_forward.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/simulator.h"
#include "sim_test_util.h"
#include "tests/sim/random_program.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

// Per trip: two DMAs in, a weight load and a matmul, an inner VPU loop, a pop, an all-reduce over
// both cores, a remote write to the other core (which waits for it) and a DMA out. Core 1 runs a
// longer inner VPU loop and a loop of its own first, so the cores' loops differ.
std::string Body(int core, int other) {
  return R"(
    dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=256
    dma.hbm_to_vmem flag=0, src=0x400, dst=0x400, elem_bytes=4, n0=64
    sync.wait flag=0, value=2
    mxu.load_weights mxu=0, addr=0x400, k=8, n=8, stride=8, dtype=f32
    mxu.matmul mxu=0, lhs=0x0, stride=8, m=32, k=8, n=8, dtype=f32, acc=0, latch=1
    ctrl.loop count=)" +
         std::to_string(3 + 2 * core) + R"(
      vpu.binary op=add, dtype=f32, dst=0x2000, a=0x0, b=0x0, rows=8, cols=128, a_bcast=none, b_bcast=none
    ctrl.endloop
    mxu.pop mxu=0, acc=0, m=32, n=8, acc_dtype=f32, dst=0x1000, stride=8, dtype=f32, act=relu
    ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x1000, dst=0x1800, count=256, group=0
    dma.vmem_to_remote flag=2, src=0x1800, dst=0x3000, elem_bytes=4, n0=64, dst_core=)" +
         std::to_string(other) + R"(, dst_space=vmem, dst_flag=3
    sync.wait flag=3, value=1
    sync.wait flag=2, value=1
    dma.vmem_to_hbm flag=1, src=0x1800, dst=)" +
         std::to_string(0x8000 + 0x1000 * core) + R"(, elem_bytes=4, n0=256
    sync.wait flag=1, value=1
)";
}

isa::Program TwoCoreLoops(int trips) {
  std::string text =
      ".replica_groups 0 {0,1}\n.core 0\n  ctrl.loop count=" + std::to_string(trips) + "\n" +
      Body(0, 1) + "  ctrl.endloop\n  ctrl.halt\n";
  text += R"(.core 1
  ctrl.loop count=5
    dma.hbm_to_vmem flag=4, src=0x0, dst=0x5000, elem_bytes=4, n0=512
    sync.wait flag=4, value=1
  ctrl.endloop
  ctrl.loop count=)" +
          std::to_string(trips) + "\n" + Body(1, 0) + "  ctrl.endloop\n  ctrl.halt\n";
  return Asm(text);
}

SimResult Simulate(const isa::Program& p, bool fast_forward, bool values = false) {
  SimOptions o;
  o.instruction_profile = true;  // per-instruction statistics compared
  o.compute_values = values;
  o.fast_forward = fast_forward;
  auto r = Simulator(TinyChip(2), o).Run(p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : SimResult{};
}

void ExpectSameStatistics(const SimResult& a, const SimResult& b) {
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.instructions_executed, b.instructions_executed);
  EXPECT_EQ(a.stats->Flatten(), b.stats->Flatten());
  ASSERT_EQ(a.cores.size(), b.cores.size());
  for (size_t c = 0; c < a.cores.size(); ++c) {
    EXPECT_EQ(a.cores[c].cycles, b.cores[c].cycles) << c;
    EXPECT_EQ(a.cores[c].stalls, b.cores[c].stalls) << c;
    EXPECT_EQ(a.cores[c].useful_macs, b.cores[c].useful_macs) << c;
    EXPECT_EQ(a.cores[c].mxu_flop, b.cores[c].mxu_flop) << c;
    EXPECT_EQ(a.cores[c].vpu_flop, b.cores[c].vpu_flop) << c;
    ASSERT_EQ(a.cores[c].ops.size(), b.cores[c].ops.size());
    for (size_t t = 0; t < a.cores[c].ops.size(); ++t) {
      const OpProfile& x = a.cores[c].ops[t];
      const OpProfile& y = b.cores[c].ops[t];
      EXPECT_EQ(x.executions, y.executions) << "core " << c << " op " << t;
      EXPECT_EQ(x.cycles, y.cycles) << "core " << c << " op " << t;
      EXPECT_EQ(x.flop, y.flop) << "core " << c << " op " << t;
      EXPECT_EQ(x.bytes, y.bytes) << "core " << c << " op " << t;
      EXPECT_EQ(x.hbm_bytes, y.hbm_bytes) << "core " << c << " op " << t;
    }
    ASSERT_EQ(a.cores[c].instructions.size(), b.cores[c].instructions.size());
    ASSERT_FALSE(a.cores[c].instructions.empty());
    for (size_t i = 0; i < a.cores[c].instructions.size(); ++i) {
      const InstructionProfile& x = a.cores[c].instructions[i];
      const InstructionProfile& y = b.cores[c].instructions[i];
      EXPECT_EQ(x.executions, y.executions) << "core " << c << " pc " << i;
      EXPECT_EQ(x.cycles, y.cycles) << "core " << c << " pc " << i;
      EXPECT_EQ(x.unit_cycles, y.unit_cycles) << "core " << c << " pc " << i;
      EXPECT_EQ(x.flop, y.flop) << "core " << c << " pc " << i;
      EXPECT_EQ(x.bytes, y.bytes) << "core " << c << " pc " << i;
    }
  }
}

TEST(FastForward, EveryStatisticEqualsTheFullSimulation) {
  for (int trips : {2, 7, 40, 301}) {
    const isa::Program p = TwoCoreLoops(trips);
    const SimResult full = Simulate(p, false);
    const SimResult fast = Simulate(p, true);
    ExpectSameStatistics(fast, full);
    EXPECT_EQ(full.fast_forward_trips, 0u);
    SimOptions every;
    every.instruction_profile = true;  // per-instruction statistics compared
    every.compute_values = false;
    every.step_every_unit = true;
    auto reference = Simulator(TinyChip(2), every).Run(p);
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    ExpectSameStatistics(fast, *reference);
    EXPECT_EQ(fast.fast_forward_trips, reference->fast_forward_trips) << trips;
    EXPECT_EQ(fast.events, reference->events) << trips;
    if (trips >= 40) {
      EXPECT_GT(fast.fast_forward_trips, static_cast<uint64_t>(trips) / 2) << trips;
      EXPECT_GT(fast.fast_forward_cycles, full.cycles.value() / 2) << trips;
      EXPECT_LT(fast.events, full.events / 2) << trips;
    }
  }
}

TEST(FastForward, NestedLoopsAndSeveralPeriodsPerOuterTrip) {
  // An outer loop around an inner loop whose trips alternate between two DMA engines.
  const isa::Program p = Asm(R"(
    ctrl.loop count=50
      ctrl.loop count=37
        dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=300
        vpu.binary op=mul, dtype=f32, dst=0x4000, a=0x2000, b=0x2000, rows=8, cols=128, a_bcast=none, b_bcast=none
        sync.wait flag=0, value=1
      ctrl.endloop
      mxu.load_weights mxu=0, addr=0x400, k=8, n=8, stride=8, dtype=bf16
      mxu.matmul mxu=0, lhs=0x0, stride=8, m=64, k=8, n=8, dtype=bf16, acc=0, latch=1
      mxu.pop mxu=0, acc=0, m=64, n=8, acc_dtype=f32, dst=0x1000, stride=8, dtype=f32, act=none
    ctrl.endloop
    ctrl.halt
  )");
  SimOptions o;
  o.instruction_profile = true;  // per-instruction statistics compared
  o.compute_values = false;
  o.fast_forward = false;
  auto full = Simulator(TinyChip(), o).Run(p);
  o.fast_forward = true;
  auto fast = Simulator(TinyChip(), o).Run(p);
  ASSERT_TRUE(full.ok() && fast.ok());
  ExpectSameStatistics(*fast, *full);
  EXPECT_GT(fast->fast_forward_trips, 0u);
}

TEST(FastForward, RandomLoopBodiesGiveTheFullSimulationsStatistics) {
  // The random programs of the equivalence tests (hazards everywhere, remote DMAs, barriers and
  // all-reduces on several cores), each core's code wrapped in one ctrl.loop.
  uint64_t skipped = 0;
  for (int cores : {1, 2, 4}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      isa::Program p = testing::RandomProgram(seed, cores, 30);
      // Each trip ends by waiting for what its flags gained (DMA completions, signals, remote
      // arrivals, less the waits), so every trip starts with the same flags.
      std::vector<std::vector<int64_t>> gain(p.cores.size(),
                                             std::vector<int64_t>(isa::kNumSyncFlags, 0));
      for (size_t c = 0; c < p.cores.size(); ++c) {
        for (const isa::Instruction& inst : p.cores[c].instructions) {
          const auto field = [&](const char* n) {
            return static_cast<int64_t>(inst.fields[isa::FieldIndex(inst.opcode, n)]);
          };
          if (inst.opcode == isa::Opcode::kSyncSignal) gain[c][field("flag")] += field("value");
          if (inst.opcode == isa::Opcode::kSyncWait) gain[c][field("flag")] -= field("value");
          if (isa::Info(inst.opcode).unit == isa::Unit::kDma) ++gain[c][field("flag")];
          if (inst.opcode == isa::Opcode::kDmaVmemToRemote) {
            ++gain[static_cast<size_t>(field("dst_core"))][field("dst_flag")];
          }
        }
      }
      for (size_t c = 0; c < p.cores.size(); ++c) {
        auto& insts = p.cores[c].instructions;
        insts.insert(insts.begin(), isa::op::CtrlLoop{.count = 60}.ToInstruction());
        for (int f = 0; f < isa::kNumSyncFlags; ++f) {
          if (gain[c][f] <= 0) continue;
          insts.insert(insts.end() - 1,
                       isa::op::SyncWait{.flag = static_cast<uint64_t>(f),
                                         .value = static_cast<uint64_t>(gain[c][f])}
                           .ToInstruction());
        }
        insts.insert(insts.end() - 1, isa::op::CtrlEndLoop{}.ToInstruction());
      }
      SimOptions o;
      o.instruction_profile = true;  // per-instruction statistics compared
      o.compute_values = false;
      o.fast_forward = false;
      const config::ChipConfig chip = TinyChip(cores > 1 ? 2 : 1, cores > 1 ? cores / 2 : 1);
      auto full = Simulator(chip, o).Run(p);
      o.fast_forward = true;
      auto fast = Simulator(chip, o).Run(p);
      ASSERT_TRUE(full.ok()) << full.status().message();
      ASSERT_TRUE(fast.ok()) << fast.status().message();
      SCOPED_TRACE(::testing::Message() << cores << " cores, seed " << seed);
      ExpectSameStatistics(*fast, *full);
      skipped += fast->fast_forward_trips;
      // Stepping every unit at every event cycle finds the same periods at the same cycles.
      o.step_every_unit = true;
      auto reference = Simulator(chip, o).Run(p);
      ASSERT_TRUE(reference.ok()) << reference.status().message();
      ExpectSameStatistics(*fast, *reference);
      EXPECT_EQ(fast->fast_forward_trips, reference->fast_forward_trips);
      EXPECT_EQ(fast->fast_forward_cycles, reference->fast_forward_cycles);
      EXPECT_EQ(fast->events, reference->events);
    }
  }
  EXPECT_GT(skipped, 0u);
}

TEST(FastForward, StopsBeforeATimingOnlyBreakUnlessLeavesTheLoop) {
  // Timing-only, ctrl.break_unless leaves the loop once `trips` trips are done: fast-forward must
  // not skip past it (the loop counter alone would allow 100000 trips).
  for (int hint : {0, 1, 57, 300, 5000}) {
    const isa::Program p = Asm(R"(
    ctrl.loop count=100000
      dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=100
      vpu.binary op=add, dtype=f32, dst=0x2000, a=0x0, b=0x0, rows=8, cols=128, a_bcast=none, b_bcast=none
      sync.wait flag=0, value=1
      dma.vmem_to_hbm flag=1, src=0x2000, dst=0x800, elem_bytes=1, n0=1
      sync.wait flag=1, value=1
      ctrl.break_unless space=hbm, addr=0x800, trips=)" +
                               std::to_string(hint) + R"(
      mxu.load_weights mxu=0, addr=0x400, k=8, n=8, stride=8, dtype=bf16
      mxu.matmul mxu=0, lhs=0x0, stride=8, m=16, k=8, n=8, dtype=bf16, acc=0, latch=1
    ctrl.endloop
    ctrl.halt
  )");
    SimOptions o;
    o.instruction_profile = true;  // per-instruction statistics compared
    o.compute_values = false;
    o.fast_forward = false;
    auto full = Simulator(TinyChip(), o).Run(p);
    o.fast_forward = true;
    auto fast = Simulator(TinyChip(), o).Run(p);
    ASSERT_TRUE(full.ok()) << full.status().message();
    ASSERT_TRUE(fast.ok()) << fast.status().message();
    SCOPED_TRACE(::testing::Message() << "trips " << hint);
    ExpectSameStatistics(*fast, *full);
    EXPECT_EQ(full->cores[0].instructions[1].executions, static_cast<uint64_t>(hint) + 1);
    if (hint >= 300) {
      EXPECT_GT(fast->fast_forward_trips, static_cast<uint64_t>(hint) / 2);
    }
  }
}

TEST(FastForward, OffWithValuesThePeModelOrATrace) {
  const isa::Program p = TwoCoreLoops(40);
  EXPECT_EQ(Simulate(p, true, /*values=*/true).fast_forward_trips, 0u);
  SimOptions o;
  o.instruction_profile = true;  // per-instruction statistics compared
  o.compute_values = false;
  o.mxu_model = MxuModelKind::kPe;
  auto pe = Simulator(TinyChip(2), o).Run(p);
  ASSERT_TRUE(pe.ok()) << pe.status().message();
  EXPECT_EQ(pe->fast_forward_trips, 0u);
  o.mxu_model = MxuModelKind::kFast;
  o.trace = true;
  auto traced = Simulator(TinyChip(2), o).Run(p);
  ASSERT_TRUE(traced.ok()) << traced.status().message();
  EXPECT_EQ(traced->fast_forward_trips, 0u);
  ExpectSameStatistics(*traced, Simulate(p, false));
}

}  // namespace
}  // namespace tpusim::sim
