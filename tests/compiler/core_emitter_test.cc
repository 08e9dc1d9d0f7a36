// CoreEmitter::Dma: dimension merging, the 3-level descriptor and the per-index fallback.
#include "compiler/lower/core_emitter.h"

#include <gtest/gtest.h>

namespace tpusim::compiler {
namespace {

std::vector<isa::op::DmaHbmToVmem> Descriptors(const isa::CoreProgram& core) {
  std::vector<isa::op::DmaHbmToVmem> out;
  for (const auto& inst : core.instructions) {
    isa::Instruction i = inst;
    i.opcode = isa::Opcode::kDmaHbmToVmem;  // same descriptor layout for both directions
    out.push_back(i.As<isa::op::DmaHbmToVmem>());
  }
  return out;
}

TEST(CoreEmitterTest, ContiguousBoxBecomesOneRun) {
  isa::CoreProgram core;
  CoreEmitter em(&core, 1 << 20);
  const std::vector<int64_t> dims{4, 5, 6};
  const auto strides = RowMajorStrides(dims, 4);
  auto n = em.Dma(isa::Opcode::kDmaHbmToVmem, 0x1000, strides, 0, strides, dims, 4, kLoadFlag);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  const auto d = Descriptors(core);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].n0, 120u);  // 4*5*6 elements in one run
  EXPECT_EQ(d[0].n1, 1u);
  EXPECT_EQ(d[0].src, 0x1000u);
}

TEST(CoreEmitterTest, TransposeUsesStridedLevels) {
  // out[i][j] = in[j][i] for in [3,5] f32: innermost out dim has source stride 20 bytes.
  isa::CoreProgram core;
  CoreEmitter em(&core, 1 << 20);
  const std::vector<int64_t> dims{5, 3}, src{4, 20}, dst{12, 4};
  auto n = em.Dma(isa::Opcode::kDmaHbmToVmem, 0, src, 0x100, dst, dims, 4, kLoadFlag);
  ASSERT_TRUE(n.ok());
  const auto d = Descriptors(core);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].n0, 1u);
  EXPECT_EQ(d[0].n1, 3u);
  EXPECT_EQ(d[0].src_s1, 20u);
  EXPECT_EQ(d[0].dst_s1, 4u);
  EXPECT_EQ(d[0].n2, 5u);
  EXPECT_EQ(d[0].src_s2, 4u);
  EXPECT_EQ(d[0].dst_s2, 12u);
}

TEST(CoreEmitterTest, FourStridedLevelsIssueOneDescriptorPerOuterIndex) {
  // A [2,3,4,5] box whose every level is strided in the source (a 4-D permutation) and n0 = 1: two
  // levels go in the descriptor's n1/n2, the two outer ones become 2*3 descriptors.
  isa::CoreProgram core;
  CoreEmitter em(&core, 1 << 20);
  const std::vector<int64_t> dims{2, 3, 4, 5};
  const std::vector<int64_t> src{4, 8, 24, 96};  // permuted source strides
  const auto dst = RowMajorStrides(dims, 4);
  auto n = em.Dma(isa::Opcode::kDmaHbmToVmem, 0, src, 0, dst, dims, 4, kLoadFlag);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 6);
  const auto d = Descriptors(core);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[1].src, 8u);  // second index of dim 1
  EXPECT_EQ(d[3].src, 4u);  // dim 0 index 1, dim 1 index 0
  EXPECT_EQ(d[5].dst, 4u * 60 + 4u * 40);
}

TEST(CoreEmitterTest, ZeroStrideRepeatsTheSource) {
  isa::CoreProgram core;
  CoreEmitter em(&core, 1 << 20);
  const std::vector<int64_t> dims{7, 9}, src{0, 4}, dst{36, 4};
  auto n = em.Dma(isa::Opcode::kDmaHbmToVmem, 0x40, src, 0, dst, dims, 4, kLoadFlag);
  ASSERT_TRUE(n.ok());
  const auto d = Descriptors(core);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].n0, 9u);
  EXPECT_EQ(d[0].n1, 7u);
  EXPECT_EQ(d[0].src_s1, 0u);
  EXPECT_EQ(d[0].dst_s1, 36u);
}

TEST(CoreEmitterTest, VmemAllocationIsBoundedAndAligned) {
  isa::CoreProgram core;
  CoreEmitter em(&core, 1000);
  EXPECT_EQ(em.AllocVmem(10), 0);
  EXPECT_EQ(em.AllocVmem(10), 64);
  EXPECT_EQ(em.AllocVmem(2000), -1);
  em.ResetVmem();
  EXPECT_EQ(em.vmem_free(), 1000);
  EXPECT_EQ(em.peak_vmem(), 74);
}

}  // namespace
}  // namespace tpusim::compiler
