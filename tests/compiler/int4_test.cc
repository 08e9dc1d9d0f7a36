// s4 and u4 on the device (issue 16 item 4): stored one element per byte (isa/types.h), computed as
// 4-bit integers in the VPU's 32-bit lanes; every value bit for bit the evaluator's — int4
// weights converted to bf16 for a dot (the int4-quantized-weight pattern), elementwise ops that
// wrap, converts that wrap or saturate, a reduction, and data movement.
#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

class Int4Test : public ::testing::TestWithParam<const char*> {};

TEST_P(Int4Test, QuantizedWeightsConvertedForADotMatchTheEvaluatorBitForBit) {
  const std::string T = GetParam();
  ExpectSameBits("HloModule m\nENTRY e {\n  x = bf16[16,256] parameter(0)\n  w = " + T +
                 "[256,128] parameter(1)\n  s = bf16[128] parameter(2)\n" +
                 "  wb = bf16[256,128] convert(w)\n" +
                 "  d = bf16[16,128] dot(x, wb), lhs_contracting_dims={1}, " +
                 "rhs_contracting_dims={0}\n  sb = bf16[16,128] broadcast(s), dimensions={1}\n" +
                 "  ROOT r = bf16[16,128] multiply(d, sb)\n}\n");
}

TEST_P(Int4Test, ElementwiseConvertsReduceAndMovesMatchTheEvaluatorBitForBit) {
  const std::string T = GetParam();
  ExpectSameBits("HloModule m\nadd {\n  a = " + T + "[] parameter(0)\n  b = " + T +
                 "[] parameter(1)\n  ROOT s = " + T + "[] add(a, b)\n}\nENTRY e {\n" +
                 "  x = " + T + "[8,256] parameter(0)\n  y = " + T + "[8,256] parameter(1)\n" +
                 "  f = f32[8,256] parameter(2)\n  m = " + T + "[8,256] multiply(x, y)\n" +
                 "  a = " + T + "[8,256] add(m, y)\n  l = " + T +
                 "[8,256] shift-right-logical(x, y)\n  h = " + T +
                 "[8,256] shift-right-arithmetic(x, y)\n  p = " + T + "[8,256] popcnt(x)\n" +
                 "  c = f32[] constant(20)\n  cb = f32[8,256] broadcast(c), dimensions={}\n" +
                 "  fs = f32[8,256] multiply(f, cb)\n  q = " + T + "[8,256] convert(fs)\n" +
                 "  i = s32[8,256] convert(a)\n  k = s32[8,256] multiply(i, i)\n" +
                 "  w = " + T + "[8,256] convert(k)\n  z = " + T + "[] constant(0)\n" +
                 "  r = " + T + "[8] reduce(a, z), dimensions={1}, to_apply=add\n" +
                 "  tr = " + T + "[256,8] transpose(l), dimensions={1,0}\n" +
                 "  g = pred[8,256] compare(x, y), direction=GT\n" +
                 "  ROOT t = (" + T + "[8], " + T + "[256,8], " + T + "[8,256], " + T +
                 "[8,256], " + T + "[8,256], " + T + "[8,256], pred[8,256]) " +
                 "tuple(r, tr, h, p, q, w, g)\n}\n");
}

INSTANTIATE_TEST_SUITE_P(Types, Int4Test, ::testing::Values("s4", "u4"));

}  // namespace
}  // namespace tpusim::compiler
