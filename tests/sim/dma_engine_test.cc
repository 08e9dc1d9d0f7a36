// sim/core/dma_engine.h: what a descriptor costs — core.dma.issue_cycles + bytes / bandwidth
// share + latency, at the HBM's or the host link's rate — and the indirect DMAs' index setup
// (IndirectSetupCycles) and read-modify-write scatter; the IndirectDmaCost tests moved here from
// indirect_dma_test.cc.
#include "sim/core/dma_engine.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/run_and_check.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

uint64_t Cycles(const std::string& text) {
  auto r = RunAndCheck(TinyChip(), Asm(text), SimOptions{});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->cycles.value() : 0;
}

TEST(IndirectDmaCost, SetupCyclesFormula) {
  // ceil(4 * count / VMEM bytes per cycle) + (count - 1) * issue cycles.
  EXPECT_EQ(DmaEngine::IndirectSetupCycles(1, ::tpusim::Cycles(1), 512).value(), 1u);
  EXPECT_EQ(DmaEngine::IndirectSetupCycles(4, ::tpusim::Cycles(1), 512).value(), 1u + 3u);
  EXPECT_EQ(DmaEngine::IndirectSetupCycles(200, ::tpusim::Cycles(2), 512).value(), 2u + 398u);
}

TEST(IndirectDmaCost, GatherCostsThePlainTransferPlusIndexSetup) {
  // tiny: HBM 64 B/cycle, 20 cycles latency, DMA issue 1 cycle, VMEM 512 B/cycle.
  // Four slices of 64 bytes = 256 bytes, the same as one contiguous 256-byte DMA; the gather adds
  // ceil(4*4/512) = 1 cycle of index read and 3 more descriptor issues: 4 cycles.
  const uint64_t plain = Cycles(R"(
    dma.hbm_to_vmem flag=0, src=0x0, dst=0x1000, n0=64
    sync.wait flag=0
  )");
  const uint64_t gather = Cycles(R"(
    .data vmem core=0, addr=0x0, s32 3, 0, 7, 1
    dma.gather flag=0, src=0x0, dst=0x1000, n0=16, idx=0x0, count=4, idx_scale=64, bound=9, slice_stride=64
    sync.wait flag=0
  )");
  // plain = issue 1 + 256/64 = 4 cycles of bytes + 20 latency (+ the sequencer's own cycles).
  EXPECT_EQ(gather - plain, 4u);
  // A combining scatter reads and writes every byte: 4 more cycles of HBM time than a plain one.
  const uint64_t assign = Cycles(R"(
    .data vmem core=0, addr=0x0, s32 3, 0, 7, 1
    dma.scatter flag=0, src=0x1000, dst=0x0, n0=16, idx=0x0, count=4, idx_scale=64, bound=9, slice_stride=64
    sync.wait flag=0
  )");
  const uint64_t add = Cycles(R"(
    .data vmem core=0, addr=0x0, s32 3, 0, 7, 1
    dma.scatter flag=0, src=0x1000, dst=0x0, n0=16, idx=0x0, count=4, idx_scale=64, bound=9, slice_stride=64, combine=1
    sync.wait flag=0
  )");
  EXPECT_EQ(assign, gather);
  EXPECT_EQ(add - assign, 256u / 64);
}

// tiny: HBM 64 B/cycle, host link 8 B/cycle. Doubling a copy's bytes adds bytes / rate cycles and
// nothing else: issue and latency are paid once.
TEST(DmaEngineCost, BytesCrossAtTheirResourcesRate) {
  auto copy = [](const char* op, int n0) {
    return Cycles("dma." + std::string(op) + " flag=0, src=0x0, dst=0x0, n0=" + std::to_string(n0) +
                  "\nsync.wait flag=0\n");
  };
  EXPECT_EQ(copy("hbm_to_vmem", 2048) - copy("hbm_to_vmem", 1024), 4096u / 64);
  EXPECT_EQ(copy("vmem_to_hbm", 2048) - copy("vmem_to_hbm", 1024), 4096u / 64);
  EXPECT_EQ(copy("host_to_hbm", 2048) - copy("host_to_hbm", 1024), 4096u / 8);
}

// Two copies on the core's two DMA engines run at once and share the HBM server: together they
// take as long as one copy of both their bytes, not twice one copy's latency.
TEST(DmaEngineCost, TwoEnginesShareTheHbm) {
  const uint64_t one = Cycles("dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, n0=2048\n"
                              "sync.wait flag=0\n");
  const uint64_t two = Cycles("dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, n0=1024\n"
                              "dma.hbm_to_vmem flag=1, src=0x1000, dst=0x1000, n0=1024\n"
                              "sync.wait flag=0\nsync.wait flag=1\n");
  EXPECT_LE(two, one + 2);  // the second descriptor issues a cycle later
  EXPECT_GE(two, one);
}

}  // namespace
}  // namespace tpusim::sim
