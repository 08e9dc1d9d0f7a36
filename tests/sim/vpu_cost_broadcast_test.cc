// The vector unit's VMEM traffic for broadcast operands (sim/core/vpu_cost.h): an operand read as
// a scalar, a row or a column costs the elements it stores — the VPU replicates it across lanes
// and sublanes in its registers (isa/opcodes.def, vpu.select) — as vpu.broadcast counts its source
// and the interpreter's footprint reads it. A [rows, cols] operand read in full costs rows x cols.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/core/vpu_cost.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

TEST(VpuCostBroadcast, BroadcastOperandsReadTheElementsTheyStore) {
  const config::ChipConfig chip = TinyChip();
  constexpr uint64_t kRows = 64, kCols = 256, kE = kRows * kCols;
  isa::Program p = Asm(fmt::format(R"(
vpu.binary op=mul, dtype=f32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}
vpu.binary op=mul, dtype=f32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}, b_bcast=scalar
vpu.binary op=add, dtype=f32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}, b_bcast=row
vpu.compare op=lt, dtype=s32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}, a_bcast=col
vpu.select dtype=bf16, dst=0x0, pred=0x0, a=0x0, b=0x0, rows={0}, cols={1}, pred_bcast=row, b_bcast=scalar
)",
                                   kRows, kCols));
  auto read = [&](int i) {
    return VectorInstructionCost(p.cores[0].instructions[static_cast<size_t>(i)], chip.core.vpu,
                                 chip.core.vmem_bytes_per_cycle)
        .vmem_bytes_read.value();
  };
  EXPECT_EQ(read(0), 2 * 4 * kE);
  EXPECT_EQ(read(1), 4 * kE + 4);
  EXPECT_EQ(read(2), 4 * kE + 4 * kCols);
  EXPECT_EQ(read(3), 4 * kRows + 4 * kE);
  EXPECT_EQ(read(4), 1 * kCols + 2 * kE + 2);
  // With a VMEM port limit the scalar operand shortens the instruction: the port, not the lanes,
  // bounds a full-width binary op on tiny (8 x 128 lanes, 64 B/cycle).
  const auto full = VectorInstructionCost(p.cores[0].instructions[0], chip.core.vpu, 64);
  const auto scalar = VectorInstructionCost(p.cores[0].instructions[1], chip.core.vpu, 64);
  EXPECT_EQ(full.occupancy.value(), (3 * 4 * kE) / 64);
  EXPECT_EQ(scalar.occupancy.value(), (2 * 4 * kE + 4 + 63) / 64);
}

}  // namespace
}  // namespace tpusim::sim
