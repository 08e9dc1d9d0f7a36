// vpu.rng_bits, on the Philox-4x32-10 block function it shares with the evaluator
// (common/philox.h, whose known answers tests/common/philox_test.cc pins): the block layout of the
// output words, the counter's advance, and the integer shifts rng users need (vpu.binary
// shl/shrl/shra).
#include <gtest/gtest.h>

#include "common/philox.h"
#include "isa/numerics.h"
#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::ReadS32;
using testing::RunAsm;
using testing::SmallChip;

TEST(VpuRngBits, BlocksOfFourWordsAndTheCounterAdvances) {
  Interpreter in(SmallChip());
  // key 7, counter 41; 6 words = 2 blocks (the second one cut after 2 words).
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, u64 7, 41
vpu.rng_bits state=0x0, dst=0x100, count=6
)");
  const auto b0 = Philox4x32({41, 0, 0, 0}, {7, 0});
  const auto b1 = Philox4x32({42, 0, 0, 0}, {7, 0});
  const std::vector<int32_t> got = ReadS32(in.vmem(0), 0x100, 6);
  const std::vector<uint32_t> want{b0[0], b0[1], b0[2], b0[3], b1[0], b1[1]};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(static_cast<uint32_t>(got[i]), want[i]) << i;
  EXPECT_EQ(ReadS32(in.vmem(0), 0x0, 4), (std::vector<int32_t>{7, 0, 43, 0}));  // ctr += 2
}

TEST(VpuRngBits, TwoCallsContinueOneStream) {
  // Blocks of whole Philox blocks (as the lowering issues them) give the words of one call.
  Interpreter one(SmallChip()), two(SmallChip());
  RunAsm(one, R"(
.data vmem core=0, addr=0x0, u64 3, 1000
vpu.rng_bits state=0x0, dst=0x100, count=12
)");
  RunAsm(two, R"(
.data vmem core=0, addr=0x0, u64 3, 1000
vpu.rng_bits state=0x0, dst=0x100, count=8
vpu.rng_bits state=0x0, dst=0x120, count=4
)");
  EXPECT_EQ(ReadS32(one.vmem(0), 0x100, 12), ReadS32(two.vmem(0), 0x100, 12));
  EXPECT_EQ(ReadS32(one.vmem(0), 0x0, 4), ReadS32(two.vmem(0), 0x0, 4));
}

TEST(VpuRngBits, KeyAndCounterAre64BitWords) {
  // XLA's u64 state words in full: the key's high word enters Philox, and the counter carries past
  // 2^32 (0xfffffffe + 3 blocks = 2^32 + 1) as the evaluator's 64-bit state does.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, u64 0x500000003, 0xfffffffe
vpu.rng_bits state=0x0, dst=0x100, count=12
)");
  EXPECT_EQ(ReadS32(in.vmem(0), 0x8, 2), (std::vector<int32_t>{1, 1}));
  const auto b2 = Philox4x32({0, 1, 0, 0}, {3, 5});  // c = 0xfffffffe + 2 = 2^32
  EXPECT_EQ(static_cast<uint32_t>(ReadS32(in.vmem(0), 0x100 + 8 * 4, 1)[0]), b2[0]);
}

TEST(VpuShifts, XlaSemanticsOnThe32BitPattern) {
  // shift-left / shift-right-logical / shift-right-arithmetic: a shift count outside [0, 32)
  // gives 0 (or the sign, arithmetic), as XLA defines them.
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShl, 3, 4, DType::kS32), 48);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShl, 1, 31, DType::kS32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShl, 1, 32, DType::kS32), 0);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShrl, -1, 28, DType::kS32), 15);  // 0xffffffff >> 28
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShrl, -1, -1, DType::kS32), 0);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShra, -16, 2, DType::kS32), -4);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShra, -16, 40, DType::kS32), -1);
  EXPECT_EQ(ApplyBinaryI(BinaryOp::kShra, 16, 40, DType::kS32), 0);
  EXPECT_TRUE(BinarySupports(BinaryOp::kShrl, DType::kS32));
  EXPECT_TRUE(BinarySupports(BinaryOp::kShrl, DType::kS8));  // on 8 bits
  EXPECT_FALSE(BinarySupports(BinaryOp::kShrl, DType::kPred));
  EXPECT_FALSE(BinarySupports(BinaryOp::kShl, DType::kF32));
}

}  // namespace
}  // namespace tpusim::isa
