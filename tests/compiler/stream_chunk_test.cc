// StreamChunkElements (lowerer.h): the chunk an elementwise kernel (own or fused) streams through
// VMEM: as many elements as the budget holds, at most all of them, whole rows when the kernel reads
// by rows, whole 8x128 vregs (multiples of 1024) when it takes several chunks.
#include <gtest/gtest.h>

#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {
namespace {

TEST(StreamChunkElementsTest, TheWholeArrayWhenItFits) {
  EXPECT_EQ(StreamChunkElements(100, 1 << 20, 12, false, 1), 100);
  EXPECT_EQ(StreamChunkElements(5000, 5000 * 8, 8, false, 1), 5000);  // exactly fits: no rounding
}

TEST(StreamChunkElementsTest, SeveralChunksAreWholeVregs) {
  // 100,000 bytes / 8 per element = 12,500 elements -> 12 vregs of 1024.
  EXPECT_EQ(StreamChunkElements(1 << 20, 100000, 8, false, 1), 12 * 1024);
  // At most one vreg's worth: kept as it is (no rounding down to 0).
  EXPECT_EQ(StreamChunkElements(1 << 20, 1000 * 4, 4, false, 1), 1000);
}

TEST(StreamChunkElementsTest, ByRowsAreWholeRows) {
  // 10,000 elements fit; rows of 300: 33 rows, not rounded to vregs.
  EXPECT_EQ(StreamChunkElements(300 * 1000, 40000, 4, true, 300), 33 * 300);
  // Not one row fits: below 1 (the caller's "does not fit" error).
  EXPECT_LT(StreamChunkElements(300 * 1000, 200 * 4, 4, true, 300), 1);
}

TEST(StreamChunkElementsTest, NoRoomIsBelowOne) {
  EXPECT_LT(StreamChunkElements(100, 3, 4, false, 1), 1);
  EXPECT_LT(StreamChunkElements(100, -768, 4, false, 1), 1);  // VMEM already over the reserve
}

}  // namespace
}  // namespace tpusim::compiler
