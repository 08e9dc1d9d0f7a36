// broadcast of an operand that fits VMEM (compiler/lower/lower_data_movement.cc): loaded once and
// replicated in VMEM by vpu.copy with zero source strides, so HBM moves the operand once and the
// result once — whichever dimensions repeat, leading, middle or trailing — with the evaluator's
// values.
#include <gtest/gtest.h>

#include <string>

#include "isa/program_traffic.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

struct BroadcastCase {
  std::string in, out, dims;
  int64_t in_bytes, out_bytes;
};

class BroadcastLoweringTest : public ::testing::TestWithParam<BroadcastCase> {};

TEST_P(BroadcastLoweringTest, MovesTheOperandOnceAndTheResultOnce) {
  const BroadcastCase& c = GetParam();
  const std::string text = "HloModule m\nENTRY e {\n  p = " + c.in +
                           " parameter(0)\n  ROOT b = " + c.out + " broadcast(p), dimensions={" +
                           c.dims + "}\n}\n";
  const testing::RunResult r = testing::ExpectSameBits(text, "tpu-v4");
  EXPECT_EQ(isa::ProgramDmaBytes(r.compiled.program),
            static_cast<double>(c.in_bytes + c.out_bytes));
}

INSTANTIATE_TEST_SUITE_P(
    Dimensions, BroadcastLoweringTest,
    ::testing::Values(
        // A per-channel vector along a middle dimension (NHWC's C of [H, W, C] rows).
        BroadcastCase{"bf16[3]", "bf16[300,300,3]", "2", 6, 300 * 300 * 3 * 2},
        // NCHW: [C] along dimension 1.
        BroadcastCase{"f32[16]", "f32[8,16,12,12]", "1", 64, 8 * 16 * 12 * 12 * 4},
        // Leading and trailing repeats around a [A, B] operand.
        BroadcastCase{"f32[5,7]", "f32[3,5,4,7]", "1,3", 140, 3 * 5 * 4 * 7 * 4},
        // A transposing broadcast: result [B, A] of operand [A, B].
        BroadcastCase{"f32[6,10]", "f32[10,4,6]", "2,0", 240, 10 * 4 * 6 * 4},
        // Five dimensions in the merged view: one copy per index of the outer two.
        BroadcastCase{"f32[2,3]", "f32[4,2,5,3,6]", "1,3", 24, 4 * 2 * 5 * 3 * 6 * 4},
        // A scalar.
        BroadcastCase{"s32[]", "s32[33,65]", "", 4, 33 * 65 * 4}));

// A broadcast read only by shifts and the other binary ops (a threefry's shift amounts, u32 on
// [64,64,12,12]) is never materialized: its readers take the scalar or the row as they stream.
TEST(VirtualBroadcastTest, ShiftsAndMulhiReadBroadcastOperandsInPlace) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = u32[64,64,12,12] parameter(0)
  k = u32[] parameter(1)
  r = u32[12] parameter(2)
  kb = u32[64,64,12,12] broadcast(k), dimensions={}
  rb = u32[64,64,12,12] broadcast(r), dimensions={3}
  a = u32[64,64,12,12] shift-left(x, kb)
  b = u32[64,64,12,12] shift-right-logical(a, rb)
  c = u32[64,64,12,12] mulhi(b, kb)
  ROOT d = u32[64,64,12,12] xor(c, a)
})";
  const testing::RunResult r = testing::ExpectSameBits(text, "tpu-v4");
  // x read once, d written once, k and r once: no [64,64,12,12] broadcast goes through HBM.
  const double array = 64.0 * 64 * 12 * 12 * 4;
  EXPECT_LE(isa::ProgramDmaBytes(r.compiled.program), 2 * array + 4 + 48);
}

}  // namespace
}  // namespace tpusim::compiler
