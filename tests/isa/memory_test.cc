// isa/memory.h: SparseMemory is byte-addressed and little-endian, reads 0 where nothing was
// written, allocates a 64 KiB page only on its first write, and refuses any range that is not
// inside its capacity — also one whose end passes 2^64 — naming the range and the memory.
#include "isa/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace tpusim::isa {
namespace {

constexpr uint64_t kPage = SparseMemory::kPageBytes;

TEST(SparseMemoryTest, UnwrittenBytesReadAsZeroAndCostNoPage) {
  SparseMemory m("HBM", uint64_t{16} << 30);  // 16 GiB, never allocated whole
  std::vector<uint8_t> out(300, 0xAB);
  ASSERT_TRUE(m.Read(uint64_t{12} << 30, out.data(), out.size()).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(300, 0));
  EXPECT_EQ(m.allocated_bytes(), 0u);
  EXPECT_EQ(m.capacity(), uint64_t{16} << 30);
  EXPECT_EQ(m.name(), "HBM");
}

TEST(SparseMemoryTest, WritesAreLittleEndianBytesAndReadBack) {
  SparseMemory m("VMEM of core 0", 1 << 20);
  const uint32_t word = 0x11223344;
  ASSERT_TRUE(m.Write(0x100, &word, 4).ok());
  uint8_t bytes[6] = {};
  ASSERT_TRUE(m.Read(0xFF, bytes, 6).ok());
  EXPECT_EQ(bytes[0], 0);  // before the write
  EXPECT_EQ(bytes[1], 0x44);
  EXPECT_EQ(bytes[2], 0x33);
  EXPECT_EQ(bytes[3], 0x22);
  EXPECT_EQ(bytes[4], 0x11);
  EXPECT_EQ(bytes[5], 0);  // after it
  EXPECT_EQ(m.allocated_bytes(), kPage);
  // A later write overwrites only its own bytes.
  const uint8_t b = 0xEE;
  ASSERT_TRUE(m.Write(0x102, &b, 1).ok());
  uint32_t back = 0;
  ASSERT_TRUE(m.Read(0x100, &back, 4).ok());
  EXPECT_EQ(back, 0x11EE3344u);
}

TEST(SparseMemoryTest, ARangeAcrossPagesTouchesEachPageOnce) {
  SparseMemory m("VMEM", 4 * kPage);
  // From 16 bytes before the end of page 0 to 16 bytes into page 2: three pages.
  std::vector<uint8_t> in(kPage + 32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_TRUE(m.Write(kPage - 16, in.data(), in.size()).ok());
  EXPECT_EQ(m.allocated_bytes(), 3 * kPage);
  std::vector<uint8_t> out(in.size());
  ASSERT_TRUE(m.Read(kPage - 16, out.data(), out.size()).ok());
  EXPECT_EQ(out, in);
  // A read across a written and an unwritten page: the unwritten part is zeros.
  std::vector<uint8_t> tail(64, 0xAB);
  ASSERT_TRUE(m.Read(2 * kPage + 0, tail.data(), tail.size()).ok());
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(tail[i], in[kPage + 16 + i]) << i;
  for (size_t i = 16; i < 64; ++i) EXPECT_EQ(tail[i], 0) << i;
}

TEST(SparseMemoryTest, TheLastByteIsInsideAndTheNextIsOutside) {
  SparseMemory m("VMEM of core 1", 1024);
  const uint8_t b = 9;
  EXPECT_TRUE(m.Write(1023, &b, 1).ok());
  EXPECT_TRUE(m.CheckRange(0, 1024).ok());
  EXPECT_TRUE(m.CheckRange(1024, 0).ok());  // an empty range at the end
  const Status st = m.Write(1023, &b, 2);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "bytes [0x3ff, 0x401) are outside VMEM of core 1 (1024 bytes)");
  uint8_t out[2];
  EXPECT_EQ(m.Read(1025, out, 0).message(),
            "bytes [0x401, 0x401) are outside VMEM of core 1 (1024 bytes)");
  EXPECT_EQ(m.allocated_bytes(), kPage);  // the refused write allocated nothing more
}

TEST(SparseMemoryTest, ARangePast2To64IsRefusedNotWrapped) {
  SparseMemory m("HBM", 1 << 20);
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  const Status st = m.CheckRange(top - 3, 8);  // wraps to 4 in 64 bits
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "bytes [0xfffffffffffffffc, 2^64 + 0x4) are outside HBM (1048576 bytes)");
  EXPECT_FALSE(m.CheckRange(16, top).ok());
}

TEST(ByteRangeTextTest, HalfOpenHexRanges) {
  EXPECT_EQ(ByteRangeText(0x100, 0x40), "[0x100, 0x140)");
  EXPECT_EQ(ByteRangeText(0, 0), "[0x0, 0x0)");
  EXPECT_EQ(ByteRangeText(std::numeric_limits<uint64_t>::max(), 1),
            "[0xffffffffffffffff, 2^64 + 0x0)");
}

}  // namespace
}  // namespace tpusim::isa
