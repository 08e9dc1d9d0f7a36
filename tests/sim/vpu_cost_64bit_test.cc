// The vector unit's cost of 64-bit integer elements (sim/core/vpu_cost.h): the VPU's lanes are 32
// bits, so moving an s64/u64 element takes two lane slots and computing on it takes
// core.vpu.ops_per_64bit_element ops (XLA's TPU backend emulates 64-bit integers with pairs of
// 32-bit values); FLOP stay one per element.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/core/vpu_cost.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

TEST(VpuCost64Bit, ArithmeticTakesOpsPer64BitElementAndMovesTakeTwoWords) {
  config::ChipConfig chip = TinyChip();
  chip.core.vpu.ops_per_64bit_element = 3;
  const uint64_t tile = static_cast<uint64_t>(chip.core.vpu.lanes * chip.core.vpu.sublanes);
  const uint64_t n = 64 * tile;
  isa::Program p = Asm(fmt::format(R"(
vpu.binary op=add, dtype=s32, dst=0x0, a=0x0, b=0x0, rows=1, cols={0}
vpu.binary op=add, dtype=s64, dst=0x0, a=0x0, b=0x0, rows=1, cols={0}
vpu.copy dtype=s64, dst=0x0, src=0x0, n0={0}
vpu.compare op=lt, dtype=u64, dst=0x0, a=0x0, b=0x0, rows=1, cols={0}
)",
                                   n));
  auto cost = [&](int i) {
    return VectorInstructionCost(p.cores[0].instructions[static_cast<size_t>(i)], chip.core.vpu,
                                 0);
  };
  EXPECT_EQ(cost(0).occupancy.value(), 64u);
  EXPECT_EQ(cost(1).occupancy.value(), 3 * 64u);
  EXPECT_EQ(cost(2).occupancy.value(), 2 * 64u);
  EXPECT_EQ(cost(3).occupancy.value(), 3 * 64u);
  EXPECT_EQ(cost(1).flop, n);
  EXPECT_EQ(cost(1).vmem_bytes_read.value(), 2 * 8 * n);
}

}  // namespace
}  // namespace tpusim::sim
