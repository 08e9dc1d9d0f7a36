// DMA semantics (isa/execute_dma.cc) through the interpreter: strided blocks and the completion
// flag, shared and private HBM, VMEM-to-VMEM copies. Moved from interpreter_system_test.cc.
#include <gtest/gtest.h>

#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::ReadF32;
using testing::ReadS32;
using testing::RunAsm;
using testing::SmallChip;

TEST(InterpreterDma, StridedBlockAndFlag) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data hbm core=0, addr=0x0, s32 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15   # [4,4]
dma.hbm_to_vmem flag=3, src=0x14, dst=0x100, elem_bytes=4, n0=2, n1=2, src_s1=16, dst_s1=8
sync.wait flag=3
dma.vmem_to_hbm flag=3, src=0x100, dst=0x1000, n0=4
dma.hbm_to_host flag=4, src=0x1000, dst=0x40, n0=4
)");
  // The 2x2 block at rows 1..2, cols 1..2 of the [4,4] matrix: src = (1*4 + 1) * 4 bytes = 0x14.
  EXPECT_EQ(ReadS32(in.vmem(0), 0x100, 4), (std::vector<int32_t>{5, 6, 9, 10}));
  EXPECT_EQ(ReadS32(in.host(), 0x40, 4), (std::vector<int32_t>{5, 6, 9, 10}));
  EXPECT_EQ(in.flag(0, 3), 1u);  // +1 (first DMA) -1 (wait) +1 (second DMA)
  EXPECT_EQ(in.flag(0, 4), 1u);
}

TEST(InterpreterDma, SharedAndPrivateHbm) {
  // Cores 0 and 1 share chip 0's HBM: what core 0 writes, core 1 reads.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, s32 42
.core 0
  dma.vmem_to_hbm flag=0, src=0x0, dst=0x80, n0=1
  sync.wait flag=0
  dma.vmem_to_remote flag=1, src=0x0, dst=0x0, n0=1, dst_core=1, dst_space=vmem, dst_flag=5
.core 1
  sync.wait flag=5
  dma.hbm_to_vmem flag=0, src=0x80, dst=0x10, n0=1
)");
  EXPECT_EQ(ReadS32(in.vmem(1), 0x0, 1)[0], 42);   // the remote DMA
  EXPECT_EQ(ReadS32(in.vmem(1), 0x10, 1)[0], 42);  // through the shared HBM
  EXPECT_EQ(&in.hbm(0), &in.hbm(1));
  EXPECT_NE(&in.hbm(0), &in.hbm(2));  // chip 1
  MemorySizes private_hbm = SmallChip();
  private_hbm.hbm_shared_by_cores = false;
  Interpreter p(private_hbm);
  Program two_cores;
  two_cores.cores.resize(2);
  ASSERT_TRUE(p.Load(two_cores).ok());
  EXPECT_NE(&p.hbm(0), &p.hbm(1));
  EXPECT_EQ(p.hbm(0).capacity(), uint64_t{32} << 20);  // half of the chip's 64 MiB
}

// dma.vmem_to_vmem: a strided copy inside one core's VMEM (a buffer memory-space assignment keeps
// in VMEM), buffered: an overlapping destination gets the source's old bytes; no HBM byte changes.
TEST(InterpreterDma, VmemToVmemCopiesInsideVmemAsIfBuffered) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, s32 1, 2, 3, 4, 5, 6
.core 0
  dma.vmem_to_vmem flag=0, src=0x0, dst=0x100, n0=2, n1=3, src_s1=8, dst_s1=16
  sync.wait flag=0
  dma.vmem_to_vmem flag=1, src=0x0, dst=0x4, n0=4
  sync.wait flag=1
)");
  EXPECT_EQ(ReadS32(in.vmem(0), 0x100, 2), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x110, 2), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x120, 2), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x0, 6), (std::vector<int32_t>{1, 1, 2, 3, 4, 6}));
  EXPECT_EQ(ReadS32(in.hbm(0), 0x0, 1)[0], 0);
}

}  // namespace
}  // namespace tpusim::isa
