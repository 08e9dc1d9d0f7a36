// AccumulatorMemory (isa/accumulator_memory.h): rows read zero until written, memory follows the
// rows written (not core.mxu.accumulator_rows), and differences are found in row-major order.
#include "isa/accumulator_memory.h"

#include <gtest/gtest.h>

#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

constexpr int64_t kMaxRows = int64_t{1} << 24;  // what the 24-bit `acc` field addresses

TEST(AccumulatorMemory, RowsReadZeroAndOnlyWrittenPagesTakeMemory) {
  AccumulatorMemory acc(kMaxRows, 4096);  // 256 GiB if every row were stored
  EXPECT_TRUE(acc.empty());
  EXPECT_EQ(acc.allocated_bytes(), 0);
  EXPECT_EQ(acc.word(kMaxRows - 1, 4095), 0u);
  EXPECT_TRUE(acc.empty());  // reading allocates nothing
  acc.MutableRow(kMaxRows - 1)[7] = 0x3f800000u;
  acc.MutableRow(kMaxRows - 2)[0] = 5;  // same page
  EXPECT_EQ(acc.allocated_bytes(), AccumulatorMemory::kPageRows * 4096 * 4);
  EXPECT_EQ(acc.f32(kMaxRows - 1, 7), 1.0f);
  EXPECT_EQ(acc.s32(kMaxRows - 2, 0), 5);
  EXPECT_EQ(acc.word(kMaxRows - 1, 6), 0u);
  EXPECT_EQ(acc.word(0, 7), 0u);
}

TEST(AccumulatorMemory, FirstDifferenceTreatsUnwrittenRowsAsZero) {
  AccumulatorMemory a(1000, 8), b(1000, 8);
  a.MutableRow(3)[1] = 0;  // written, but still zero: no difference from b's unwritten row
  EXPECT_FALSE(a.FirstDifference(b).has_value());
  EXPECT_EQ(a, b);
  b.MutableRow(700)[2] = 9;
  a.MutableRow(900)[0] = 4;
  auto d = a.FirstDifference(b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->row, 700);
  EXPECT_EQ(d->col, 2);
  EXPECT_EQ(d->mine, 0u);
  EXPECT_EQ(d->other, 9u);
  b.MutableRow(700)[2] = 0;
  d = a.FirstDifference(b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->row, 900);
  EXPECT_EQ(d->mine, 4u);
}

TEST(AccumulatorMemory, GrowingAddsRowsThatReadZero) {
  AccumulatorMemory acc(0, 4);
  acc.EnsureRows(130);
  EXPECT_EQ(acc.rows(), 130);
  EXPECT_TRUE(acc.empty());
  acc.MutableRow(129)[3] = 1;
  EXPECT_EQ(acc.word(129, 3), 1u);
  acc.EnsureRows(10);  // never shrinks
  EXPECT_EQ(acc.rows(), 130);
}

// The interpreter on a chip with the most accumulator rows the ISA addresses and wide columns:
// a matmul and pop at the last rows run in memory for one page, not rows x cols x 4 bytes.
TEST(AccumulatorMemory, InterpreterStoresOnlyTheRowsAProgramWrites) {
  MemorySizes s = testing::SmallChip();
  s.accumulator_rows = kMaxRows;
  s.mxu_cols = 4096;
  Interpreter in(s);
  testing::RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 1, 2, 3, 4     # W [2,2] = [[1,2],[3,4]]
.data vmem core=0, addr=0x100, bf16 1, 1, 2, 0   # A [2,2] = [[1,1],[2,0]]
mxu.load_weights mxu=0, addr=0x0, k=2, n=2, stride=2, dtype=bf16
mxu.matmul mxu=0, lhs=0x100, stride=2, m=2, k=2, n=2, dtype=bf16, acc=16777214, latch=1
mxu.pop mxu=0, acc=16777214, m=2, n=2, acc_dtype=f32, dst=0x200, stride=2, dtype=f32
mxu.pop mxu=0, acc=0, m=1, n=2, acc_dtype=f32, dst=0x300, stride=2, dtype=f32
)");
  EXPECT_EQ(testing::ReadF32(in.vmem(0), 0x200, 4), (std::vector<float>{4, 6, 2, 4}));
  EXPECT_EQ(testing::ReadF32(in.vmem(0), 0x300, 2), (std::vector<float>{0, 0}));
  EXPECT_EQ(in.mxu(0, 0).acc.allocated_bytes(), AccumulatorMemory::kPageRows * 4096 * 4);
  EXPECT_TRUE(in.mxu(0, 1).acc.empty());
}

}  // namespace
}  // namespace tpusim::isa
