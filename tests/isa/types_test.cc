// isa/types.h: element widths and classes, the broadcast operand rule (how many elements a VPU
// operand holds and which one a result element reads), and the assembly names of every enum.
#include "isa/types.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "isa/opcode.h"

namespace tpusim::isa {
namespace {

TEST(TypesTest, EveryDTypeHasItsWidthAndClass) {
  struct Row {
    DType t;
    int bytes, int_bits;
    bool is_float, is_integer, is_unsigned;
  };
  const Row rows[] = {
      {DType::kBF16, 2, 16, true, false, false}, {DType::kF32, 4, 32, true, false, false},
      {DType::kF16, 2, 16, true, false, false},  {DType::kF64, 8, 64, true, false, false},
      {DType::kS4, 1, 4, false, true, false},    {DType::kU4, 1, 4, false, true, true},
      {DType::kS8, 1, 8, false, true, false},    {DType::kU8, 1, 8, false, true, true},
      {DType::kS16, 2, 16, false, true, false},  {DType::kU16, 2, 16, false, true, true},
      {DType::kS32, 4, 32, false, true, false},  {DType::kU32, 4, 32, false, true, true},
      {DType::kS64, 8, 64, false, true, false},  {DType::kU64, 8, 64, false, true, true},
      {DType::kPred, 1, 1, false, false, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(Name(r.t));
    EXPECT_EQ(DTypeBytes(r.t), r.bytes);
    EXPECT_EQ(IsFloat(r.t), r.is_float);
    EXPECT_FALSE(IsFloat8(r.t));
    EXPECT_EQ(IsInteger(r.t), r.is_integer);
    EXPECT_EQ(IsUnsigned(r.t), r.is_unsigned);
    if (!r.is_float) {
      EXPECT_EQ(IntBits(r.t), r.int_bits);
    }
  }
  // The eight f8 types: one byte, float, none of the integer classes.
  int f8 = 0;
  for (int v = 0; v < EnumCardinality(FieldKind::kDType); ++v) {
    const auto t = static_cast<DType>(v);
    if (!IsFloat8(t)) continue;
    ++f8;
    EXPECT_EQ(DTypeBytes(t), 1) << Name(t);
    EXPECT_TRUE(IsFloat(t)) << Name(t);
    EXPECT_FALSE(IsInteger(t)) << Name(t);
    EXPECT_EQ(Name(t).substr(0, 2), "f8");
  }
  EXPECT_EQ(f8, 8);
  EXPECT_EQ(static_cast<size_t>(EnumCardinality(FieldKind::kDType)), std::size(rows) + 8);
}

// A [3, 4] result (rows 3, cols 4) read through each broadcast mode.
TEST(TypesTest, BroadcastOperandElementsAndIndices) {
  EXPECT_EQ(BroadcastOperandElements(Broadcast::kNone, 3, 4), 12u);
  EXPECT_EQ(BroadcastOperandElements(Broadcast::kScalar, 3, 4), 1u);
  EXPECT_EQ(BroadcastOperandElements(Broadcast::kRow, 3, 4), 4u);  // one row of cols
  EXPECT_EQ(BroadcastOperandElements(Broadcast::kCol, 3, 4), 3u);  // one column of rows
  // Result element (2, 1): row-major 9; the scalar; column 1 of the row; row 2 of the column.
  EXPECT_EQ(BroadcastOperandIndex(Broadcast::kNone, 2, 1, 4), 9u);
  EXPECT_EQ(BroadcastOperandIndex(Broadcast::kScalar, 2, 1, 4), 0u);
  EXPECT_EQ(BroadcastOperandIndex(Broadcast::kRow, 2, 1, 4), 1u);
  EXPECT_EQ(BroadcastOperandIndex(Broadcast::kCol, 2, 1, 4), 2u);
  // Every index a mode produces lies inside the operand it says it holds.
  for (Broadcast b : {Broadcast::kNone, Broadcast::kScalar, Broadcast::kRow, Broadcast::kCol}) {
    std::set<uint64_t> seen;
    for (uint64_t r = 0; r < 3; ++r) {
      for (uint64_t c = 0; c < 4; ++c) seen.insert(BroadcastOperandIndex(b, r, c, 4));
    }
    EXPECT_EQ(seen.size(), BroadcastOperandElements(b, 3, 4)) << Name(b);
    EXPECT_EQ(*seen.rbegin() + 1, BroadcastOperandElements(b, 3, 4)) << Name(b);
  }
}

TEST(TypesTest, NamesAreTheAssemblySpellings) {
  EXPECT_EQ(Name(DType::kBF16), "bf16");
  EXPECT_EQ(Name(DType::kF8E4M3B11FNUZ), "f8e4m3b11fnuz");
  EXPECT_EQ(Name(MemSpace::kAcc), "acc");
  EXPECT_EQ(Name(MemSpace::kHost), "host");
  EXPECT_EQ(Name(UnaryOp::kRoundNe), "round_ne");
  EXPECT_EQ(Name(BinaryOp::kShra), "shra");
  EXPECT_EQ(Name(CompareOp::kGe), "ge");
  EXPECT_EQ(Name(ReduceOp::kMin), "min");
  EXPECT_EQ(Name(ReduceAxis::kSublanes), "sublanes");
  EXPECT_EQ(Name(Broadcast::kCol), "col");
  EXPECT_EQ(Name(Activation::kLogistic), "logistic");
  EXPECT_EQ(Name(PrecisionPart::kLoLo), "lolo");
  // Outside the enum: no name (the encoder's range check refuses such a value).
  EXPECT_EQ(Name(static_cast<DType>(200)), "");
  EXPECT_EQ(Name(static_cast<MemSpace>(5)), "");
}

}  // namespace
}  // namespace tpusim::isa
