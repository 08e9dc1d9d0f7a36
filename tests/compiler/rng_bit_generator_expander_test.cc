// rng-bit-generator with algorithm=rng_three_fry / rng_philox on the device: rewritten by
// rng-bit-generator-expander into XLA's elementwise expansion, every bit and the new state equal
// to the evaluator's direct computation (hlo/eval/kernels/rng_xla.h, pinned by XLA's values in
// tests/eval/rng_xla_test.cc) for random states: every way the u32 words are laid out (an even
// dimension split in halves, only odd dimensions, a scalar, a count not a multiple of four), u64,
// u16 and u8 bits, Philox's u64[3] state, and a use of the bits as floats.
#include <gtest/gtest.h>

#include <string>

#include "compiler/passes/rng_bit_generator_expander.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

std::string Module(const std::string& algorithm, const std::string& state,
                   const std::string& bits) {
  return "HloModule m\nENTRY e {\n  s = " + state + " parameter(0)\n  ROOT r = (" + state + ", " +
         bits + ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
}

class RngBitGeneratorExpanderTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RngBitGeneratorExpanderTest, EveryLayoutMatchesTheEvaluatorBitForBit) {
  const std::string algorithm = GetParam();
  for (const char* bits : {"u32[4,8]", "u32[3,5]", "u32[]", "u32[7]", "u32[1,9,3]", "u64[5]",
                           "u64[2,3]", "u16[7]", "u8[6]"}) {
    SCOPED_TRACE(bits);
    ExpectSameBits(Module(algorithm, "u64[2]", bits));
  }
}

TEST_P(RngBitGeneratorExpanderTest, UniformFloatsFromTheBitsMatchTheEvaluator) {
  ExpectSameBits(R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  g = (u64[2], u32[16,128]) rng-bit-generator(s), algorithm=)" +
                 std::string(GetParam()) + R"(
  b = u32[16,128] get-tuple-element(g), index=1
  n = u32[] constant(9)
  nb = u32[16,128] broadcast(n), dimensions={}
  m = u32[16,128] shift-right-logical(b, nb)
  o = u32[] constant(1065353216)
  ob = u32[16,128] broadcast(o), dimensions={}
  w = u32[16,128] or(m, ob)
  f = f32[16,128] bitcast-convert(w)
  st = u64[2] get-tuple-element(g), index=0
  ROOT t = (u64[2], f32[16,128]) tuple(st, f)
})");
}

INSTANTIATE_TEST_SUITE_P(Algorithms, RngBitGeneratorExpanderTest,
                         ::testing::Values("rng_three_fry", "rng_philox"));

TEST(RngBitGeneratorExpanderTest, PhiloxWithAThreeWordStateMatchesTheEvaluator) {
  ExpectSameBits(Module("rng_philox", "u64[3]", "u32[128]"));
  ExpectSameBits(Module("rng_philox", "u64[3]", "u64[9]"));
}

TEST(RngBitGeneratorExpanderTest, LeavesTheDefaultAndWhatXlaDoesNotTake) {
  for (const std::string& text :
       {Module("rng_default", "u64[2]", "u32[8]"), Module("rng_three_fry", "u64[3]", "u32[8]"),
        Module("rng_philox", "u64[2]", "s32[8]")}) {
    auto m = testing::Parse(text);
    ASSERT_NE(m, nullptr);
    RngBitGeneratorExpander pass;
    auto changed = pass.Run(*m);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed) << text;
  }
  auto m = testing::Parse(Module("rng_three_fry", "u64[2]", "u32[8]"));
  ASSERT_NE(m, nullptr);
  RngBitGeneratorExpander pass;
  auto changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  for (const auto& i : m->entry_computation()->instructions()) {
    EXPECT_NE(i->opcode(), hlo::HloOpcode::kRngBitGenerator);
  }
}

}  // namespace
}  // namespace tpusim::compiler
