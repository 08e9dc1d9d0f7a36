// VPU / XLU instruction semantics (isa/execute_vpu.cc) on small hand-checked cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::ReadBf16;
using testing::ReadF32;
using testing::ReadS32;
using testing::ReadS8;
using testing::RunAsm;
using testing::SmallChip;

TEST(InterpreterVpu, BinaryWithBroadcasts) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 1, 2, 3, 4, 5, 6     # a [2,3]
.data vmem core=0, addr=0x40, f32 10, 20, 30          # row vector [3]
.data vmem core=0, addr=0x80, f32 10, 100             # column vector [2]
.data vmem core=0, addr=0xc0, f32 1                   # scalar
vpu.binary op=add, dtype=f32, dst=0x100, a=0x0, b=0x40, rows=2, cols=3, b_bcast=row
vpu.binary op=mul, dtype=f32, dst=0x200, a=0x0, b=0x80, rows=2, cols=3, b_bcast=col
vpu.binary op=sub, dtype=f32, dst=0x300, a=0xc0, b=0x0, rows=1, cols=3, a_bcast=scalar
)");
  // a + row: [1+10, 2+20, 3+30, 4+10, 5+20, 6+30].
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 6), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // a * col: row 0 times 10, row 1 times 100.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x200, 6), (std::vector<float>{10, 20, 30, 400, 500, 600}));
  // 1 - a[0, :] = [0, -1, -2].
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 3), (std::vector<float>{0, -1, -2}));
}

TEST(InterpreterVpu, Bf16ComputesInF32AndRoundsOnce) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 1, 1, 3
.data vmem core=0, addr=0x10, bf16 0.00390625, 0.01171875, 0.00390625
vpu.binary op=add, dtype=bf16, dst=0x100, a=0x0, b=0x10, cols=3
)");
  // 1 + 2^-8: exact in f32, a tie in bf16 -> even -> 1. 1 + 3*2^-8 (tie between 1+2^-7 and 1+2^-6)
  // -> 1 + 2^-6 = 1.015625. 3 + 2^-8: below half an ulp of 3 in bf16 (2^-6) -> 3.
  EXPECT_EQ(ReadBf16(in.vmem(0), 0x100, 3), (std::vector<float>{1.0f, 1.015625f, 3.0f}));
}

TEST(InterpreterVpu, UnaryOps) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 0, 1, 4, -2.5
.data vmem core=0, addr=0x40, s32 -2147483648, -3, 5
vpu.unary op=exp, dtype=f32, dst=0x100, src=0x0, count=2
vpu.unary op=rsqrt, dtype=f32, dst=0x200, src=0x8, count=1
vpu.unary op=logistic, dtype=f32, dst=0x300, src=0x0, count=1
vpu.unary op=floor, dtype=f32, dst=0x400, src=0xc, count=1
vpu.unary op=abs, dtype=s32, dst=0x500, src=0x40, count=3
vpu.unary op=round_ne, dtype=f32, dst=0x600, src=0xc, count=1
)");
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 2), (std::vector<float>{1.0f, std::exp(1.0f)}));
  EXPECT_EQ(ReadF32(in.vmem(0), 0x200, 1)[0], 0.5f);   // 1/sqrt(4)
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 1)[0], 0.5f);   // 1/(1+e^0)
  EXPECT_EQ(ReadF32(in.vmem(0), 0x400, 1)[0], -3.0f);  // floor(-2.5)
  // abs(INT_MIN) wraps to INT_MIN (two's complement), abs(-3) = 3.
  EXPECT_EQ(ReadS32(in.vmem(0), 0x500, 3),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 3, 5}));
  EXPECT_EQ(ReadF32(in.vmem(0), 0x600, 1)[0], -2.0f);  // -2.5 rounds to even
}

TEST(InterpreterVpu, CompareSelect) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 1, 0x7fc00000, 3
.data vmem core=0, addr=0x20, f32 2
.data vmem core=0, addr=0x40, f32 10, 20, 30
.data vmem core=0, addr=0x60, f32 -1, -2, -3
vpu.compare op=lt, dtype=f32, dst=0x100, a=0x0, b=0x20, cols=3, b_bcast=scalar
vpu.select dtype=f32, dst=0x200, pred=0x100, a=0x40, b=0x60, cols=3
)");
  // 1 < 2 true; NaN < 2 false; 3 < 2 false.
  std::vector<uint8_t> p(3);
  ASSERT_TRUE(in.vmem(0).Read(0x100, p.data(), 3).ok());
  EXPECT_EQ(p, (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(ReadF32(in.vmem(0), 0x200, 3), (std::vector<float>{10, -2, -3}));
}

TEST(InterpreterVpu, SelectReadsBroadcastOperands) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 1, 2, 3, 4, 5, 6     # a [2,3]
.data vmem core=0, addr=0x40, f32 -1                  # scalar
.data vmem core=0, addr=0x80, f32 10, 20, 30          # row vector [3]
.data vmem core=0, addr=0xc0, s8 1, 0                 # pred column [2]
.data vmem core=0, addr=0xd0, s8 0, 1, 1              # pred row [3]
.data vmem core=0, addr=0xe0, s8 1                    # pred scalar
vpu.select dtype=f32, dst=0x100, pred=0xc0, a=0x0, b=0x40, rows=2, cols=3, pred_bcast=col, b_bcast=scalar
vpu.select dtype=f32, dst=0x200, pred=0xd0, a=0x80, b=0x0, rows=2, cols=3, pred_bcast=row, a_bcast=row
vpu.select dtype=f32, dst=0x300, pred=0xe0, a=0x40, b=0x0, rows=2, cols=3, pred_bcast=scalar, a_bcast=scalar
)");
  // Row 0 keeps a, row 1 takes the scalar.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 6), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  // Column 0 from a, columns 1 and 2 from the row vector.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x200, 6), (std::vector<float>{1, 20, 30, 4, 20, 30}));
  // A true scalar predicate selects the scalar everywhere.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 6), (std::vector<float>{-1, -1, -1, -1, -1, -1}));
}

TEST(InterpreterVpu, ConvertRules) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 1.9, -1.9, 300, 0x7fc00000, -inf
.data vmem core=0, addr=0x40, s32 200, -129, 16777217
vpu.convert src_dtype=f32, dtype=s8, dst=0x100, src=0x0, count=5
vpu.convert src_dtype=s32, dtype=s8, dst=0x200, src=0x40, count=2
vpu.convert src_dtype=s32, dtype=f32, dst=0x300, src=0x48, count=1
vpu.convert src_dtype=f32, dtype=pred, dst=0x400, src=0x0, count=5
)");
  // float -> int: toward zero, saturate, NaN -> 0.
  EXPECT_EQ(ReadS8(in.vmem(0), 0x100, 5), (std::vector<int8_t>{1, -1, 127, 0, -128}));
  // int -> int wraps: 200 -> -56, -129 -> 127.
  EXPECT_EQ(ReadS8(in.vmem(0), 0x200, 2), (std::vector<int8_t>{-56, 127}));
  // 2^24 + 1 -> f32 rounds to even: 2^24.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 1)[0], 16777216.0f);
  std::vector<uint8_t> p(5);
  ASSERT_TRUE(in.vmem(0).Read(0x400, p.data(), 5).ok());
  EXPECT_EQ(p, (std::vector<uint8_t>{1, 1, 1, 1, 1}));  // all non-zero (NaN != 0)
}

// f64 computes in binary64 (numerics.h): each case below gives another value in f32, the float
// types' compute type (16777217 is not an f32; 1 + 2^-40 reads as 1 there). The .data lines are the
// f64 bytes of: a = {1 + 2^-40, 16777217, 1e300}, b = {2^-40, 1, 1e10}, {1, 16777216, 1e300}
// and 1 + 2^-8 + 2^-40.
TEST(InterpreterVpu, F64ComputesInBinary64) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, hex 001000000000f03f00000010000070419c7500883ce4377e
.data vmem core=0, addr=0x40, hex 000000000000703d000000000000f03f000000205fa00242
.data vmem core=0, addr=0x80, hex 000000000000f03f00000000000070419c7500883ce4377e
.data vmem core=0, addr=0xc0, hex 001000000010f03f
vpu.binary op=add, dtype=f64, dst=0x100, a=0x0, b=0x40, cols=3
vpu.binary op=mul, dtype=f64, dst=0x140, a=0x0, b=0x40, cols=3
vpu.compare op=gt, dtype=f64, dst=0x180, a=0x0, b=0x80, cols=3
vpu.reduce op=sum, axis=lanes, dtype=f64, dst=0x1c0, src=0x0, rows=1, cols=2
vpu.unary op=neg, dtype=f64, dst=0x200, src=0x8, count=1
vpu.convert src_dtype=f64, dtype=s32, dst=0x240, src=0x8, count=1
vpu.convert src_dtype=f64, dtype=bf16, dst=0x280, src=0xc0, count=1
vpu.convert src_dtype=s64, dtype=f64, dst=0x2c0, src=0x240, count=1
)");
  auto f64s = [&](uint64_t addr, size_t n) {
    std::vector<double> v(n);
    EXPECT_TRUE(in.vmem(0).Read(addr, v.data(), n * sizeof(double)).ok());
    return v;
  };
  // (1 + 2^-40) + 2^-40, 16777217 + 1, 1e300 + 1e10 (1e300: the sum rounds back).
  EXPECT_EQ(f64s(0x100, 3), (std::vector<double>{1 + 0x1p-39, 16777218.0, 1e300}));
  // (1 + 2^-40) * 2^-40 exactly; 1e300 * 1e10 overflows binary64.
  EXPECT_EQ(f64s(0x140, 3), (std::vector<double>{0x1p-40 + 0x1p-80, 16777217.0,
                                                  std::numeric_limits<double>::infinity()}));
  std::vector<uint8_t> gt(3);
  ASSERT_TRUE(in.vmem(0).Read(0x180, gt.data(), 3).ok());
  EXPECT_EQ(gt, (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(f64s(0x1c0, 1)[0], 16777218.0);  // (1 + 2^-40) + 16777217, rounded once
  EXPECT_EQ(f64s(0x200, 1)[0], -16777217.0);
  EXPECT_EQ(ReadS32(in.vmem(0), 0x240, 1)[0], 16777217);
  // 1 + 2^-8 + 2^-40 -> bf16 once: 1 + 2^-7 (through an f32 rounded to nearest, 1 + 2^-8 would
  // be a tie, and even, 1).
  EXPECT_EQ(ReadBf16(in.vmem(0), 0x280, 1)[0], 1.0078125f);
  EXPECT_EQ(f64s(0x2c0, 1)[0], 16777217.0);  // s64 16777217 (the s32 above, zero-extended) exactly
}

TEST(InterpreterVpu, Reductions) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 1, 2, 3, 4, 5, 6       # [2,3]
.data vmem core=0, addr=0x40, f32 1, 0x7fc00000, 3
vpu.reduce op=sum, axis=lanes, dtype=f32, dst=0x100, src=0x0, rows=2, cols=3
vpu.reduce op=sum, axis=sublanes, dtype=f32, dst=0x200, src=0x0, rows=2, cols=3
vpu.reduce op=max, axis=all, dtype=f32, dst=0x300, src=0x0, rows=2, cols=3
vpu.reduce op=max, axis=all, dtype=f32, dst=0x340, src=0x40, rows=1, cols=3
)");
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 2), (std::vector<float>{6, 15}));    // per row
  EXPECT_EQ(ReadF32(in.vmem(0), 0x200, 3), (std::vector<float>{5, 7, 9}));  // per column
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 1)[0], 6.0f);
  EXPECT_TRUE(std::isnan(ReadF32(in.vmem(0), 0x340, 1)[0]));  // max propagates NaN
}

TEST(InterpreterVpu, SumReductionOrderIsSequential) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 16777216, 1, 1
vpu.reduce op=sum, axis=all, dtype=f32, dst=0x100, src=0x0, cols=3
)");
  // ((2^24 + 1) + 1) with a rounding after each add = 2^24 (a tree would also give 2^24 here, but a
  // pairwise (1 + 1) + 2^24 would give 2^24 + 2).
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 1)[0], 16777216.0f);
}

TEST(InterpreterVpu, AccumulatingReductionContinuesFromDst) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, f32 1, 1, 1, 1
.data vmem core=0, addr=0x100, f32 16777216, 100
.data vmem core=0, addr=0x200, s32 10, 20
.data vmem core=0, addr=0x240, s32 1, 2, 3, 4
vpu.reduce op=sum, axis=sublanes, dtype=f32, dst=0x100, src=0x0, rows=2, cols=2, acc=1
vpu.reduce op=sum, axis=lanes, dtype=s32, dst=0x200, src=0x240, rows=2, cols=2, acc=1
)");
  // Column 0: (2^24 + 1) + 1 rounded after each add = 2^24 (summing the block first, then adding it,
  // would give 2^24 + 2); column 1: 100 + 1 + 1.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 2), (std::vector<float>{16777216.0f, 102.0f}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x200, 2), (std::vector<int32_t>{13, 27}));
}

TEST(InterpreterVpu, BroadcastTransposeCopyFillIota) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, s32 1, 2, 3, 4, 5, 6
vpu.broadcast mode=row, dtype=s32, dst=0x100, src=0x0, rows=2, cols=3
vpu.broadcast mode=col, dtype=s32, dst=0x200, src=0x0, rows=2, cols=3
xlu.transpose dtype=s32, dst=0x300, src=0x0, rows=2, cols=3
vpu.copy dtype=s32, dst=0x400, src=0x14, n0=6, src_s0=-1
vpu.copy dtype=s32, dst=0x500, src=0x0, n0=2, n1=3, src_s0=3, src_s1=1, dst_s0=1, dst_s1=2
vpu.fill dtype=bf16, dst=0x600, count=2, value=0.1
vpu.iota dtype=s32, dst=0x700, rows=2, cols=3, axis=sublanes
)");
  EXPECT_EQ(ReadS32(in.vmem(0), 0x100, 6), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x200, 6), (std::vector<int32_t>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x300, 6), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  // Reverse: start at element 5 (byte 0x14), stride -1.
  EXPECT_EQ(ReadS32(in.vmem(0), 0x400, 6), (std::vector<int32_t>{6, 5, 4, 3, 2, 1}));
  // Strided copy as a transpose: dst[i1*2 + i0] = src[i0*3 + i1].
  EXPECT_EQ(ReadS32(in.vmem(0), 0x500, 6), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(ReadBf16(in.vmem(0), 0x600, 2),
            (std::vector<float>{RoundToBf16(0.1f), RoundToBf16(0.1f)}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x700, 6), (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
}

TEST(InterpreterVpu, UnsupportedOpDtypeIsAnError) {
  Interpreter in(SmallChip());
  Status st = testing::RunAsmStatus(in, "vpu.unary op=exp, dtype=s32, dst=0, src=0, count=1\n");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "core 0 instruction 0 (test.tasm:1) vpu.unary: op=exp is not defined for s32");
}

}  // namespace
}  // namespace tpusim::isa
