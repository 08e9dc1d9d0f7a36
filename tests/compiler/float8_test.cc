// XLA's eight f8 types on the device (issue 16 item 4): stored at one byte, computed in f32, every
// value bit for bit the evaluator's — elementwise ops, converts that round and overflow, a
// reduction, data movement, and dots / convolutions of f8 operands and results
// (float8-dot-upcast: bf16 operands on the MXU, one rounding of the f32 result).
#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

class Float8Test : public ::testing::TestWithParam<const char*> {};

TEST_P(Float8Test, ElementwiseConvertsAndReduceMatchTheEvaluatorBitForBit) {
  const std::string T = GetParam();
  ExpectSameBits("HloModule m\nadd {\n  a = " + T + "[] parameter(0)\n  b = " + T +
                 "[] parameter(1)\n  ROOT s = " + T + "[] add(a, b)\n}\nENTRY e {\n" +
                 "  x = f32[8,256] parameter(0)\n  y = " + T + "[8,256] parameter(1)\n" +
                 "  c = f32[] constant(600)\n  cb = f32[8,256] broadcast(c), dimensions={}\n" +
                 "  xs = f32[8,256] multiply(x, cb)\n  q = " + T + "[8,256] convert(xs)\n" +
                 "  m = " + T + "[8,256] multiply(q, y)\n  e = " + T + "[8,256] exponential(y)\n" +
                 "  s = " + T + "[8,256] subtract(m, e)\n  z = " + T + "[] constant(0)\n" +
                 "  r = " + T + "[8] reduce(s, z), dimensions={1}, to_apply=add\n" +
                 "  b = bf16[8,256] convert(s)\n  p = pred[8,256] compare(q, y), direction=GT\n" +
                 "  ROOT t = (" + T + "[8], bf16[8,256], pred[8,256], " + T +
                 "[8,256]) tuple(r, b, p, q)\n}\n");
}

TEST_P(Float8Test, DotsOfF8OperandsAndResultsMatchTheEvaluatorBitForBit) {
  const std::string T = GetParam();
  ExpectSameBits("HloModule m\nENTRY e {\n  a = " + T + "[16,256] parameter(0)\n  b = " + T +
                 "[256,128] parameter(1)\n  c = bf16[256,128] parameter(2)\n" +
                 "  d = f32[16,128] dot(a, b), lhs_contracting_dims={1}, " +
                 "rhs_contracting_dims={0}\n" +
                 "  g = " + T + "[16,128] dot(a, c), lhs_contracting_dims={1}, " +
                 "rhs_contracting_dims={0}\n  ROOT t = (f32[16,128], " + T +
                 "[16,128]) tuple(d, g)\n}\n");
}

TEST_P(Float8Test, ConvolutionOfF8OperandsMatchesTheEvaluatorBitForBit) {
  const std::string T = GetParam();
  ExpectSameBits("HloModule m\nENTRY e {\n  x = " + T + "[2,8,8,16] parameter(0)\n  k = " + T +
                 "[3,3,16,32] parameter(1)\n  ROOT c = f32[2,8,8,32] convolution(x, k), " +
                 "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n");
}

TEST_P(Float8Test, DataMovementKeepsEveryByte) {
  const std::string T = GetParam();
  auto ty = [&](const std::string& dims) { return T + "[" + dims + "]"; };
  ExpectSameBits("HloModule m\nENTRY e {\n  x = " + ty("8,128") + " parameter(0)\n" +
                 "  i = s32[] parameter(1)\n  z = s32[] constant(0)\n" +
                 "  t = " + ty("128,8") + " transpose(x), dimensions={1,0}\n" +
                 "  c = " + ty("8,256") + " concatenate(x, x), dimensions={1}\n" +
                 "  d = " + ty("4,128") + " dynamic-slice(x, i, z), dynamic_slice_sizes={4,128}\n" +
                 "  v = " + ty("") + " constant(1)\n" +
                 "  p = " + ty("10,128") + " pad(x, v), padding=1_1x0_0\n" +
                 "  s = " + ty("4,64") + " slice(x), slice={[2:6], [0:128:2]}\n" +
                 "  r = " + ty("1024") + " reshape(x)\n" +
                 "  b = " + ty("2,8,128") + " broadcast(x), dimensions={1,2}\n" +
                 "  u = " + ty("8,128") + " dynamic-update-slice(x, d, i, z)\n" +
                 "  ROOT o = (" + ty("128,8") + ", " + ty("8,256") + ", " + ty("10,128") + ", " +
                 ty("4,64") + ", " + ty("1024") + ", " + ty("2,8,128") + ", " + ty("8,128") +
                 ") tuple(t, c, p, s, r, b, u)\n}\n");
}

INSTANTIATE_TEST_SUITE_P(Types, Float8Test,
                         ::testing::Values("f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4", "f8e4m3fnuz",
                                           "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e8m0fnu"));

}  // namespace
}  // namespace tpusim::compiler
