// rng-bit-generator lowered onto vpu.rng_bits: the bits and the advanced state equal the
// evaluator's (the same Philox stream), including a stream longer than one VMEM block, and the
// uniform-float idiom PyTorch/XLA writes (bits >> 9, convert, scale) built on shift-right-logical.
#include <gtest/gtest.h>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

TEST(RngLoweringTest, BitsAndStateMatchTheEvaluator) {
  CheckAgainstEvaluator(R"(
HloModule rng
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[1000]) rng-bit-generator(s), algorithm=rng_default
}
)",
                        "tiny", 0, 0);
}

TEST(RngLoweringTest, UniformFloatsAsPyTorchXlaWritesThem) {
  // aten::uniform_ in PyTorch/XLA (pt_linear_model_pp2_stage0.hlo): 23 random mantissa bits.
  CheckAgainstEvaluator(R"(
HloModule uniform
ENTRY e {
  seed = s64[] parameter(0)
  a = s64[] constant(214013)
  c = s64[] constant(2531011)
  m = s64[] multiply(a, seed)
  x = s64[] add(m, c)
  k = u64[] convert(x)
  k1 = u64[1] reshape(k)
  z = u64[1] constant({0})
  st = u64[2] concatenate(k1, z), dimensions={0}
  r = (u64[2], u32[64]) rng-bit-generator(st), algorithm=rng_default
  bits = u32[64] get-tuple-element(r), index=1
  nine = u32[64] constant({9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
  sh = u32[64] shift-right-logical(bits, nine)
  f = f32[64] convert(sh)
  eps = f32[] constant(1.1920929e-07)
  epsb = f32[64] broadcast(eps), dimensions={}
  ROOT u = f32[64] multiply(f, epsb)
}
)",
                        "tiny", 0, 0);
}

TEST(RngLoweringTest, SixtyFourBitValuesTakeTwoWordsEach) {
  // A u64 value is two Philox words (low, high), as XLA's generator makes it.
  CheckAgainstEvaluator(R"(
HloModule rng
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u64[9]) rng-bit-generator(s), algorithm=rng_default
}
)",
                        "tiny", 0, 0);
}

TEST(RngLoweringTest, NarrowDefaultValuesAreRefusedByName) {
  auto m = testing::Parse(R"(
HloModule rng
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u16[8]) rng-bit-generator(s), algorithm=rng_default
}
)");
  ASSERT_NE(m, nullptr);
  auto c = Compile(*m, testing::Config("tiny"), {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("u16 random values (32- and 64-bit integers only"),
            std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
