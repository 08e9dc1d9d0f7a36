// sim/core/tensor_core.h: the FLOP and bytes each instruction execution accounts for in the
// per-instruction profile (and so the per-op report): a matmul 2 x M x K x N FLOP and its LHS
// bytes, load_weights the tile's bytes, pop its output bytes, a vector instruction what
// isa/vpu_cost.h says, a DMA its HBM bytes, scalar instructions nothing; summed over executions.
#include "sim/core/tensor_core.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

TEST(TensorCoreTest, EachInstructionAccountsItsFlopAndBytes) {
  SimOptions o;
  o.instruction_profile = true;
  o.compute_values = false;
  o.fast_forward = false;
  auto r = Simulator(TinyChip(), o).Run(Asm(R"(
mxu.load_weights mxu=0, addr=0x0, k=8, n=8, stride=8, dtype=bf16
ctrl.loop count=2
  mxu.matmul mxu=0, lhs=0x100, stride=8, m=16, k=8, n=8, dtype=bf16, acc=0, latch=1
ctrl.endloop
mxu.pop mxu=0, acc=0, m=16, n=8, acc_dtype=f32, dst=0x1000, stride=8, dtype=f32
vpu.binary op=add, dtype=f32, dst=0x2000, a=0x1000, b=0x1000, rows=16, cols=8
vpu.fill dtype=s32, dst=0x3000, count=10, value=1
dma.vmem_to_hbm flag=0, src=0x2000, dst=0x0, n0=32, n1=4, src_s1=128, dst_s1=128
sync.wait flag=0
ctrl.halt
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<InstructionProfile>& p = r->cores[0].instructions;
  ASSERT_EQ(p.size(), 10u);
  struct Want {
    uint64_t executions, flop, bytes;
  };
  const Want want[] = {
      {1, 0, 8 * 8 * 2},                // load_weights: the [8, 8] bf16 tile
      {1, 0, 0},                        // ctrl.loop
      {2, 2 * 2 * 16 * 8 * 8, 2 * 16 * 8 * 2},  // matmul x 2: 2MKN FLOP, the [16, 8] bf16 LHS
      {2, 0, 0},                        // ctrl.endloop
      {1, 0, 16 * 8 * 4},               // pop: [16, 8] f32 written
      {1, 128, 3 * 128 * 4},            // add: 128 FLOP; reads 2 x 512 B, writes 512 B
      {1, 0, 10 * 4},                   // fill: data movement, 40 B written
      {1, 0, 4 * 32 * 4},               // DMA: 4 rows of 32 f32 to HBM
      {1, 0, 0},                        // sync.wait
      {1, 0, 0},                        // ctrl.halt
  };
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i].executions, want[i].executions) << "instruction " << i;
    EXPECT_EQ(p[i].flop, want[i].flop) << "instruction " << i;
    EXPECT_EQ(p[i].bytes, want[i].bytes) << "instruction " << i;
  }
  EXPECT_EQ(r->cores[0].mxu_flop, 2u * 2 * 16 * 8 * 8);
  EXPECT_EQ(r->cores[0].vpu_flop, 128u);
  EXPECT_EQ(r->cores[0].useful_macs, 2u * 16 * 8 * 8);
}

}  // namespace
}  // namespace tpusim::sim
