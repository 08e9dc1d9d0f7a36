// Shape rules of bitcast, bitcast-convert, dynamic-reshape, cholesky and triangular-solve
// (hlo/shape_inference_views.h, shape_inference_linalg.h). Each was taken as written before; the
// adversarial pass of issue 21 (session 17) found each accepted by `compile` and timing-only `run`
// with a result its operands do not give (a dynamic-reshape without its size operands even ran
// with values and "PASSED"). Each case below is a located error.
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

// The verifier's first message for a module of `params` (one per line) and a ROOT `op`.
std::string Verify(const std::string& params, const std::string& op) {
  const std::string text = "HloModule m\nENTRY e {\n" + params + "  ROOT r = " + op + "\n}\n";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "v.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "parse error";
  Status s = VerifyModule(**m, text);
  return s.ok() ? "" : s.message().substr(0, s.message().find('\n'));
}

TEST(ViewsAndLinalgShapesTest, BitcastKeepsTheByteSize) {
  const std::string p = "  p = f32[8,128] parameter(0)\n";
  EXPECT_EQ(Verify(p, "f32[1024] bitcast(p)"), "");
  EXPECT_EQ(Verify(p, "s32[128,8] bitcast(p)"), "");
  EXPECT_EQ(Verify(p, "f32[1023] bitcast(p)"),
            "v.hlo:4:8: error: '%r' (bitcast): bitcast from f32[8,128] (4096 bytes) to f32[1023] "
            "(4092 bytes) changes the byte size");
}

TEST(ViewsAndLinalgShapesTest, BitcastConvertFollowsTheWidthRatio) {
  EXPECT_EQ(Verify("  p = f32[8,128] parameter(0)\n", "s32[8,128] bitcast-convert(p)"), "");
  EXPECT_EQ(Verify("  p = f32[8,128] parameter(0)\n", "s16[8,128,2] bitcast-convert(p)"), "");
  EXPECT_EQ(Verify("  p = s16[8,128,2] parameter(0)\n", "f32[8,128] bitcast-convert(p)"), "");
  EXPECT_EQ(Verify("  p = f32[8,128] parameter(0)\n", "s32[8,129] bitcast-convert(p)"),
            "v.hlo:4:8: error: '%r' (bitcast-convert): shape mismatch: the operands give "
            "s32[8,128] but the instruction is written as s32[8,129]");
  EXPECT_EQ(Verify("  p = f32[8,128] parameter(0)\n", "s16[8,128] bitcast-convert(p)"),
            "v.hlo:4:8: error: '%r' (bitcast-convert): shape mismatch: the operands give "
            "s16[8,128,2] but the instruction is written as s16[8,128]");
  EXPECT_EQ(Verify("  p = s16[8,128,3] parameter(0)\n", "f32[8,128] bitcast-convert(p)"),
            "v.hlo:4:8: error: '%r' (bitcast-convert): bitcast-convert from s16[8,128,3] to "
            "f32[8,128] needs a last dimension of 2 (the width ratio)");
}

TEST(ViewsAndLinalgShapesTest, DynamicReshapeTakesOneS32SizePerDimension) {
  const std::string p = "  p = f32[8,128] parameter(0)\n  a = s32[] constant(1024)\n";
  EXPECT_EQ(Verify(p, "f32[<=1024] dynamic-reshape(p, a)"), "");
  EXPECT_EQ(Verify(p, "f32[1024] dynamic-reshape(p)"),
            "v.hlo:5:8: error: '%r' (dynamic-reshape): needs the operand and one size per "
            "dimension of f32[1024] (2 operands), has 1");
  EXPECT_EQ(Verify(p + "  f = f32[] constant(1024)\n", "f32[1024] dynamic-reshape(p, f)"),
            "v.hlo:6:8: error: '%r' (dynamic-reshape): size operand 1 must be an s32 scalar, got "
            "f32[]");
  EXPECT_EQ(Verify(p, "f32[2048] dynamic-reshape(p, a)"),
            "v.hlo:5:8: error: '%r' (dynamic-reshape): dynamic-reshape of f32[8,128] to "
            "f32[2048]: the result must have the operand's element type and at most its "
            "elements");
}

TEST(ViewsAndLinalgShapesTest, CholeskyAndTriangularSolve) {
  EXPECT_EQ(Verify("  a = f32[3,4,4] parameter(0)\n", "f32[3,4,4] cholesky(a), lower=true"), "");
  EXPECT_EQ(Verify("  a = f32[4,4] parameter(0)\n", "f32[4,5] cholesky(a), lower=true"),
            "v.hlo:4:8: error: '%r' (cholesky): shape mismatch: the operands give f32[4,4] but "
            "the instruction is written as f32[4,5]");
  EXPECT_EQ(Verify("  a = f32[4,3] parameter(0)\n", "f32[4,3] cholesky(a), lower=true"),
            "v.hlo:4:8: error: '%r' (cholesky): cholesky needs a floating-point [..., n, n] "
            "operand, got f32[4,3]");
  // XLA's cholesky_expander test factors c64: valid XLA, refused by name.
  EXPECT_EQ(Verify("  a = c64[2,4,4] parameter(0)\n", "c64[2,4,4] cholesky(a), lower=true"),
            "v.hlo:4:8: error: '%r' (cholesky): cholesky of a complex matrix (c64[2,4,4]) is "
            "valid XLA but not modelled: tpusim factors real floating-point matrices");
  const std::string ab = "  a = f32[4,4] parameter(0)\n  b = f32[4,8] parameter(1)\n";
  EXPECT_EQ(Verify(ab, "f32[4,8] triangular-solve(a, b), left_side=true, lower=true"), "");
  EXPECT_EQ(Verify(ab, "f32[4,9] triangular-solve(a, b), left_side=true, lower=true"),
            "v.hlo:5:8: error: '%r' (triangular-solve): shape mismatch: the operands give "
            "f32[4,8] but the instruction is written as f32[4,9]");
  EXPECT_EQ(Verify(ab, "f32[4,8] triangular-solve(a, b), left_side=false, lower=true"),
            "v.hlo:5:8: error: '%r' (triangular-solve): triangular-solve of a f32[4,4] and b "
            "f32[4,8] (left_side=false): a must be [..., k, k] of b's type and batch dimensions, "
            "k b's last dimension");
}

}  // namespace
}  // namespace tpusim::hlo
