// isa/machine_state.h: the architectural state one run holds — per core a
// VMEM, an SMEM, 256 sync flags and its MXUs' accumulators; an HBM per chip (shared by its cores)
// or per core (private shares); the host memory — built from the chip's figures, written from
// data segments (errors name the segment), and the flag arithmetic both engines use.
#include "isa/machine_state.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "isa/memory_sizes.h"

namespace tpusim::isa {
namespace {

// Two chips of two cores each, 1 KiB VMEM, 256 B SMEM, 4 KiB HBM a chip, two 8 x 16 MXUs.
MemorySizes Sizes(bool shared) {
  MemorySizes s;
  s.cores = 4;
  s.tensorcores_per_chip = 2;
  s.vmem_bytes = 1024;
  s.smem_bytes = 256;
  s.hbm_bytes_per_chip = 4096;
  s.hbm_shared_by_cores = shared;
  s.mxu_count = 2;
  s.mxu_rows = 8;
  s.mxu_cols = 16;
  s.accumulator_rows = 32;
  return s;
}

TEST(MachineStateTest, SharedHbmIsOnePerChip) {
  auto s = MachineState::Create(Sizes(true), 3);  // chip 0's two cores and chip 1's first
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->num_cores(), 3);
  ASSERT_EQ(s->hbm.size(), 2u);
  EXPECT_EQ(s->hbm[1].name(), "HBM of chip 1");
  EXPECT_EQ(s->hbm[0].capacity(), 4096u);
  EXPECT_EQ(s->HbmIndex(0), 0);
  EXPECT_EQ(s->HbmIndex(1), 0);
  EXPECT_EQ(s->HbmIndex(2), 1);
  EXPECT_EQ(&s->memory(MemSpace::kHbm, 1), &s->hbm[0]);
  const CoreState& c = s->cores[2];
  EXPECT_EQ(c.vmem.name(), "VMEM of core 2");
  EXPECT_EQ(c.vmem.capacity(), 1024u);
  EXPECT_EQ(c.smem.name(), "SMEM of core 2");
  EXPECT_EQ(c.flags.size(), static_cast<size_t>(kNumSyncFlags));
  ASSERT_EQ(c.mxus.size(), 2u);
  EXPECT_EQ(s->host.name(), "host memory");
  EXPECT_EQ(s->host.capacity(), uint64_t{1} << 40);
}

TEST(MachineStateTest, PrivateHbmIsEachCoresShare) {
  auto s = MachineState::Create(Sizes(false), 3);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->hbm.size(), 3u);
  EXPECT_EQ(s->hbm[2].name(), "HBM of core 2");
  EXPECT_EQ(s->hbm[2].capacity(), 2048u);  // half of the chip's 4 KiB
  EXPECT_EQ(s->HbmIndex(2), 2);
  EXPECT_EQ(&s->memory(MemSpace::kHbm, 1), &s->hbm[1]);
}

TEST(MachineStateTest, MoreCoresThanTheSystemIsAnError) {
  auto s = MachineState::Create(Sizes(true), 5);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "the program has 5 cores but the system has only 4");
  auto none = MachineState::Create(Sizes(true), 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->hbm.empty());
}

TEST(MachineStateTest, SegmentsGoToTheirMemoryAndErrorsNameTheSegment) {
  auto s = MachineState::Create(Sizes(true), 2);
  ASSERT_TRUE(s.ok());
  DataSegment vmem{MemSpace::kVmem, 1, 0x10, {1, 2, 3}};
  DataSegment host{MemSpace::kHost, 7, 0x20, {9}};  // host memory: any core number
  ASSERT_TRUE(s->WriteSegments({vmem, host}, "segment").ok());
  uint8_t b[3] = {};
  ASSERT_TRUE(s->vmem(1).Read(0x10, b, 3).ok());
  EXPECT_EQ(b[2], 3);
  ASSERT_TRUE(s->host.Read(0x20, b, 1).ok());
  EXPECT_EQ(b[0], 9);
  EXPECT_EQ(s->WriteSegments({vmem, DataSegment{MemSpace::kSmem, 2, 0, {1}}}, "argument")
                .message(),
            "argument 1: no smem memory of core 2");
  EXPECT_EQ(s->WriteSegments({DataSegment{MemSpace::kAcc, 0, 0, {1}}}, "segment").message(),
            "segment 0: no acc memory of core 0");
  EXPECT_EQ(s->WriteSegments({DataSegment{MemSpace::kVmem, 0, 1023, {1, 2}}}, "segment").message(),
            "segment 0: bytes [0x3ff, 0x401) are outside VMEM of core 0 (1024 bytes)");
}

TEST(MachineStateTest, FlagsCountUpToTwoTo32MinusOne) {
  auto s = MachineState::Create(Sizes(true), 1);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->BumpFlag(0, 255).ok());
  EXPECT_EQ(s->cores[0].flags[255], 1u);
  uint32_t word = 0xFFFFFFF0u;
  ASSERT_TRUE(AddToFlag(word, 15, 3).ok());
  EXPECT_EQ(word, 0xFFFFFFFFu);
  const Status st = AddToFlag(word, 1, 3);
  EXPECT_EQ(st.message(), "flag 3 overflows 2^32-1");
  EXPECT_EQ(word, 0xFFFFFFFFu);  // unchanged
  EXPECT_FALSE(AddToFlag(word, UINT64_MAX, 3).ok());
}

}  // namespace
}  // namespace tpusim::isa
