// vpu.rng_bits on the simulator: the same words as the interpreter (RunAndCheck compares the final
// memory), and the vector-unit cost of 15 ALU element-ops per word (isa/vpu_cost.h).
#include <gtest/gtest.h>

#include "isa/vpu_cost.h"
#include "sim/run_and_check.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

TEST(RngBitsSimTest, SameWordsAsTheInterpreterAndTheVectorUnitCost) {
  const config::ChipConfig chip = TinyChip();
  isa::Program p = Asm(R"(
.data vmem core=0, addr=0x0, u64 11, 5
vpu.rng_bits state=0x0, dst=0x100, count=4096
vpu.binary op=shrl, dtype=s32, dst=0x100, a=0x100, b=0x8100, rows=1, cols=4096, b_bcast=scalar
.data vmem core=0, addr=0x8100, s32 9
)");
  auto r = RunAndCheck(chip, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const isa::VectorCost c = isa::VectorInstructionCost(p.cores[0].instructions[0],
                                                       chip.core.vpu, chip.core.vmem_bytes_per_cycle);
  const uint64_t tile = static_cast<uint64_t>(chip.core.vpu.lanes * chip.core.vpu.sublanes);
  const uint64_t per_cycle = static_cast<uint64_t>(chip.core.vpu.ops_per_cycle);
  EXPECT_EQ(c.occupancy.value(), (15 * 4096 + tile - 1) / tile / per_cycle);
  EXPECT_EQ(c.flop, 0u);
  EXPECT_EQ(c.elements, 4096u);
  EXPECT_GE(r->cycles, c.occupancy);
}

}  // namespace
}  // namespace tpusim::sim
