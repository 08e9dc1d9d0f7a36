// isa/vpu_cost.h: the one cost formula of a VPU / XLU instruction, which the simulator's vector
// unit and the compiler's estimates both call. Occupancy = max(vreg ops / ops_per_cycle, VMEM
// bytes / port bytes per cycle), at least 1; latency = class latency + occupancy - 1. Broadcast
// operands read the elements they store; 64-bit integer elements take two lane slots when moved
// and core.vpu.ops_per_64bit_element ops when computed on (XLA's TPU backend emulates them with
// pairs of 32-bit values); FLOP stay one per element.
#include "isa/vpu_cost.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "isa/assembler.h"

namespace tpusim::isa {
namespace {

Program Asm(const std::string& text) {
  auto p = Assemble(text, "test.tasm");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : Program{};
}

const Instruction& Nth(const Program& p, int i) {
  return p.cores[0].instructions[static_cast<size_t>(i)];
}

// A vpu.fill of 3,000 f32 on 8 x 128 lanes: ceil(3000 / 1024) = 3 vreg ops; 12,000 bytes written.
TEST(VpuCost, FillIsItsVregOpsOrItsVmemWritesWhicheverIsLonger) {
  config::VpuConfig vpu;  // 128 x 8 lanes, ALU latency 2
  const Program p = Asm("vpu.fill dtype=f32, dst=0x0, count=3000, value=0\n");
  vpu.ops_per_cycle = 1;
  VectorCost c = VectorInstructionCost(Nth(p, 0), vpu, 0);  // 0: no port limit
  EXPECT_EQ(c.occupancy.value(), 3u);
  EXPECT_EQ(c.latency.value(), 2u + 3u - 1u);
  EXPECT_EQ(c.vmem_bytes_written.value(), 12000u);
  EXPECT_EQ(c.vmem_bytes_read.value(), 0u);
  EXPECT_EQ(c.elements, 3000u);
  EXPECT_EQ(c.flop, 0u);  // data movement
  vpu.ops_per_cycle = 2;  // two vreg ops a cycle: ceil(3 / 2)
  EXPECT_EQ(VectorInstructionCost(Nth(p, 0), vpu, 0).occupancy.value(), 2u);
  // A 512 B/cycle port: ceil(12000 / 512) = 24 cycles, longer than the vreg ops.
  c = VectorInstructionCost(Nth(p, 0), vpu, 512);
  EXPECT_EQ(c.occupancy.value(), 24u);
  EXPECT_EQ(c.latency.value(), 2u + 24u - 1u);
  // An empty fill still occupies the unit one cycle.
  const Program empty = Asm("vpu.fill dtype=f32, dst=0x0, count=0, value=0\n");
  EXPECT_EQ(VectorInstructionCost(Nth(empty, 0), vpu, 512).occupancy.value(), 1u);
}

TEST(VpuCost, TheLatencyClassIsTheOpsConfigKey) {
  config::VpuConfig vpu;
  vpu.alu_latency_cycles = 3;
  vpu.transcendental_latency_cycles = 11;
  vpu.divide_latency_cycles = 7;
  const Program p = Asm(R"(
vpu.binary op=add, dtype=f32, dst=0x0, a=0x0, b=0x0, rows=8, cols=128
vpu.unary op=exp, dtype=f32, dst=0x0, src=0x0, count=1024
vpu.unary op=rsqrt, dtype=f32, dst=0x0, src=0x0, count=1024
)");
  // One vreg op each: latency = the class latency.
  EXPECT_EQ(VectorInstructionCost(Nth(p, 0), vpu, 0).latency.value(), 3u);
  EXPECT_EQ(VectorInstructionCost(Nth(p, 1), vpu, 0).latency.value(), 11u);
  EXPECT_EQ(VectorInstructionCost(Nth(p, 2), vpu, 0).latency.value(), 7u);
  EXPECT_EQ(VectorInstructionCost(Nth(p, 0), vpu, 0).flop, 1024u);
}

// Moved from tests/sim/vpu_cost_64bit_test.cc.
TEST(VpuCost64Bit, ArithmeticTakesOpsPer64BitElementAndMovesTakeTwoWords) {
  config::VpuConfig vpu;
  vpu.ops_per_64bit_element = 3;
  const uint64_t tile = static_cast<uint64_t>(vpu.lanes * vpu.sublanes);
  const uint64_t n = 64 * tile;
  const Program p = Asm(fmt::format(R"(
vpu.binary op=add, dtype=s32, dst=0x0, a=0x0, b=0x0, rows=1, cols={0}
vpu.binary op=add, dtype=s64, dst=0x0, a=0x0, b=0x0, rows=1, cols={0}
vpu.copy dtype=s64, dst=0x0, src=0x0, n0={0}
vpu.compare op=lt, dtype=u64, dst=0x0, a=0x0, b=0x0, rows=1, cols={0}
)",
                                    n));
  auto cost = [&](int i) { return VectorInstructionCost(Nth(p, i), vpu, 0); };
  EXPECT_EQ(cost(0).occupancy.value(), 64u);
  EXPECT_EQ(cost(1).occupancy.value(), 3 * 64u);
  EXPECT_EQ(cost(2).occupancy.value(), 2 * 64u);
  EXPECT_EQ(cost(3).occupancy.value(), 3 * 64u);
  EXPECT_EQ(cost(1).flop, n);
  EXPECT_EQ(cost(1).vmem_bytes_read.value(), 2 * 8 * n);
}

// Moved from tests/sim/vpu_cost_broadcast_test.cc. An operand read as a scalar, a row or a column
// costs the elements it stores — the VPU replicates it across lanes and sublanes in its registers
// (isa/opcodes.def, vpu.select) — as vpu.broadcast counts its source and the interpreter's
// footprint reads it. A [rows, cols] operand read in full costs rows x cols.
TEST(VpuCostBroadcast, BroadcastOperandsReadTheElementsTheyStore) {
  const config::VpuConfig vpu;
  constexpr uint64_t kRows = 64, kCols = 256, kE = kRows * kCols;
  const Program p = Asm(fmt::format(R"(
vpu.binary op=mul, dtype=f32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}
vpu.binary op=mul, dtype=f32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}, b_bcast=scalar
vpu.binary op=add, dtype=f32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}, b_bcast=row
vpu.compare op=lt, dtype=s32, dst=0x0, a=0x0, b=0x0, rows={0}, cols={1}, a_bcast=col
vpu.select dtype=bf16, dst=0x0, pred=0x0, a=0x0, b=0x0, rows={0}, cols={1}, pred_bcast=row, b_bcast=scalar
)",
                                    kRows, kCols));
  auto read = [&](int i) {
    return VectorInstructionCost(Nth(p, i), vpu, 512).vmem_bytes_read.value();
  };
  EXPECT_EQ(read(0), 2 * 4 * kE);
  EXPECT_EQ(read(1), 4 * kE + 4);
  EXPECT_EQ(read(2), 4 * kE + 4 * kCols);
  EXPECT_EQ(read(3), 4 * kRows + 4 * kE);
  EXPECT_EQ(read(4), 1 * kCols + 2 * kE + 2);
  // With a VMEM port limit the scalar operand shortens the instruction: the port, not the lanes,
  // bounds a full-width binary op on 8 x 128 lanes at 64 B/cycle.
  const auto full = VectorInstructionCost(Nth(p, 0), vpu, 64);
  const auto scalar = VectorInstructionCost(Nth(p, 1), vpu, 64);
  EXPECT_EQ(full.occupancy.value(), (3 * 4 * kE) / 64);
  EXPECT_EQ(scalar.occupancy.value(), (2 * 4 * kE + 4 + 63) / 64);
}

}  // namespace
}  // namespace tpusim::isa
