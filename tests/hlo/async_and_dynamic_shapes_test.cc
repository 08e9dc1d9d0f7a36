// Shape rules of set-/get-dimension-size, ragged-all-to-all, rng-bit-generator and the -start /
// -update halves of the asynchronous forms (hlo/shape_inference_jax.h, shape_inference_async.h).
// Each was taken as written before; the adversarial pass of issue 21 found a double free (a
// set-dimension-size dimension of 2^63 - 1), a TPUSIM_CHECK (a ragged-all-to-all written with a
// shape other than its output operand's), "HLO verifier failed after pass" (async-to-sync
// rebuilding an all-gather, copy or call from a -start whose tuple did not match its operand) and
// modules `compile` accepted that `cpu` refused. Each case below is a located error.
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

std::string Verify(const std::string& header, const std::string& body) {
  const std::string text = header + "\nENTRY e {\n" + body + "}\n";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "v.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "parse error";
  Status s = VerifyModule(**m, text);
  return s.ok() ? "" : s.message().substr(0, s.message().find('\n'));
}

std::string Dynamic(const std::string& size_type, const std::string& op) {
  return Verify("HloModule m", "  p = f32[8,128] parameter(0)\n  n = " + size_type +
                                   "[] constant(5)\n" + op);
}

TEST(AsyncAndDynamicShapesTest, SetDimensionSize) {
  EXPECT_EQ(Dynamic("s32", "  ROOT s = f32[8,<=128] set-dimension-size(p, n), dimensions={1}\n"),
            "");
  EXPECT_EQ(Dynamic("s32", "  ROOT s = f32[8,<=128] set-dimension-size(p, n), "
                           "dimensions={9223372036854775807}\n"),
            "v.hlo:5:8: error: '%s' (set-dimension-size): dimension 9223372036854775807 is out of "
            "range for f32[8,128] (rank 2)");
  EXPECT_EQ(Dynamic("s32", "  ROOT s = f32[8,<=128] set-dimension-size(p, n), dimensions={}\n"),
            "v.hlo:5:8: error: '%s' (set-dimension-size): needs dimensions={d} (one dimension), "
            "has 0");
  EXPECT_EQ(Dynamic("f32", "  ROOT s = f32[8,<=128] set-dimension-size(p, n), dimensions={1}\n"),
            "v.hlo:5:8: error: '%s' (set-dimension-size): the size (operand 1) must be an s32 "
            "scalar, got f32[]");
  // The bound is the operand's size: a result written with another is a mismatch.
  EXPECT_EQ(Dynamic("s32", "  ROOT s = f32[8,<=64] set-dimension-size(p, n), dimensions={1}\n"),
            "v.hlo:5:8: error: '%s' (set-dimension-size): shape mismatch: the operands give "
            "f32[8,<=128] but the instruction is written as f32[8,<=64]");
}

TEST(AsyncAndDynamicShapesTest, GetDimensionSize) {
  EXPECT_EQ(Dynamic("s32", "  ROOT g = s32[] get-dimension-size(p), dimensions={1}\n"), "");
  EXPECT_EQ(Dynamic("s32", "  ROOT g = s32[] get-dimension-size(p), dimensions={2}\n"),
            "v.hlo:5:8: error: '%g' (get-dimension-size): dimension 2 is out of range for "
            "f32[8,128] (rank 2)");
  EXPECT_EQ(Verify("HloModule m", "  p = f32[3000000000] parameter(0)\n"
                                  "  ROOT g = s32[] get-dimension-size(p), dimensions={0}\n"),
            "v.hlo:4:8: error: '%g' (get-dimension-size): dimension 0 of f32[3000000000] is "
            "3000000000, more than the s32 result holds");
}

std::string Ragged(const std::string& in, const std::string& out, const std::string& offsets,
                   const std::string& result) {
  return Verify("HloModule m, replica_count=2",
                "  p = " + in + " parameter(0)\n  o = " + out + " parameter(1)\n  io = " +
                    offsets + " parameter(2)\n  ss = s32[2] parameter(3)\n  oo = s32[2] "
                    "parameter(4)\n  rs = s32[2] parameter(5)\n  ROOT r = " + result +
                    " ragged-all-to-all(p, o, io, ss, oo, rs), replica_groups={{0,1}}\n");
}

TEST(AsyncAndDynamicShapesTest, RaggedAllToAll) {
  EXPECT_EQ(Ragged("f32[8,3]", "f32[6,3]", "s32[2]", "f32[6,3]"), "");
  const std::string where = "v.hlo:9:8: error: '%r' (ragged-all-to-all): ";
  EXPECT_EQ(Ragged("f32[8]", "f32[8]", "s32[2]", "f32[9]"),
            where + "shape mismatch: the operands give f32[8] but the instruction is written as "
                    "f32[9]");
  EXPECT_EQ(Ragged("f32[8,3]", "f32[8]", "s32[2]", "f32[8]"),
            where + "input f32[8,3] and output f32[8] must have one element type and equal "
                    "dimensions but the first (rows)");
  EXPECT_EQ(Ragged("f32[8]", "s32[8]", "s32[2]", "s32[8]"),
            where + "input f32[8] and output s32[8] must have one element type and equal "
                    "dimensions but the first (rows)");
  EXPECT_EQ(Ragged("f32[8]", "f32[8]", "f32[2]", "f32[8]"),
            where + "the offsets and sizes (operands 2-5) must be s32 or s64 arrays of rank 1 or "
                    "2, all of one shape; operand 2 is f32[2]");
  EXPECT_EQ(Ragged("f32[8]", "f32[8]", "s32[3]", "f32[8]"),
            where + "the offsets and sizes (operands 2-5) must be s32 or s64 arrays of rank 1 or "
                    "2, all of one shape; operand 3 is s32[2], operand 2 s32[3]");
}

TEST(AsyncAndDynamicShapesTest, RngBitGenerator) {
  auto rng = [](const std::string& state, const std::string& result) {
    return Verify("HloModule m", "  s = " + state + " parameter(0)\n  ROOT r = " + result +
                                     " rng-bit-generator(s), algorithm=rng_default\n");
  };
  EXPECT_EQ(rng("u64[2]", "(u64[2], u32[8,128])"), "");
  const std::string where = "v.hlo:4:8: error: '%r' (rng-bit-generator): ";
  EXPECT_EQ(rng("u64[2]", "(u64[3], u32[8])"),
            where + "state u64[2] and result (u64[3], u32[8]) are not u64[n] and (u64[n], an "
                    "integer array)");
  EXPECT_EQ(rng("f32[2]", "(f32[2], u32[8])"),
            where + "state f32[2] and result (f32[2], u32[8]) are not u64[n] and (u64[n], an "
                    "integer array)");
  EXPECT_EQ(rng("u64[0]", "(u64[0], u32[8])"),
            where + "state u64[0] and result (u64[0], u32[8]) are not u64[n] and (u64[n], an "
                    "integer array)");
  EXPECT_EQ(rng("u64[2]", "(u64[2], f32[8])"),
            where + "state u64[2] and result (u64[2], f32[8]) are not u64[n] and (u64[n], an "
                    "integer array)");
}

TEST(AsyncAndDynamicShapesTest, StartsMatchTheirOperands) {
  const std::string two = "HloModule m, replica_count=2";
  EXPECT_EQ(Verify(two, "  p = f32[8,128] parameter(0)\n  s = (f32[8,128], f32[16,128]) "
                        "all-gather-start(p), dimensions={0}, replica_groups={{0,1}}\n  ROOT r = "
                        "f32[16,128] all-gather-done(s)\n"),
            "");
  EXPECT_EQ(Verify(two, "  p = f32[8,9] parameter(0)\n  s = (f32[8,128], f32[16,128]) "
                        "all-gather-start(p), dimensions={0}, replica_groups={{0,1}}\n  ROOT r = "
                        "f32[16,128] all-gather-done(s)\n"),
            "v.hlo:4:3: error: '%s' (all-gather-start): (f32[8,128], f32[16,128]) is not "
            "(f32[8,9], the operand gathered along dimension 0 by 2)");
  EXPECT_EQ(Verify(two, "  p = f32[8,128] parameter(0)\n  s = (f32[8,128], f32[24,128]) "
                        "all-gather-start(p), dimensions={0}, replica_groups={{0,1}}\n  ROOT r = "
                        "f32[24,128] all-gather-done(s)\n"),
            "v.hlo:4:3: error: '%s' (all-gather-start): (f32[8,128], f32[24,128]) is not "
            "(f32[8,128], the operand gathered along dimension 0 by 2)");
  EXPECT_EQ(Verify(two, "  p = f32[8,128] parameter(0)\n  s = (f32[8,128], f32[16,128]) "
                        "all-gather-start(p), dimensions={2}, replica_groups={{0,1}}\n  ROOT r = "
                        "f32[16,128] all-gather-done(s)\n"),
            "v.hlo:4:3: error: '%s' (all-gather-start): needs an array operand and "
            "dimensions={d} with d < its rank, got f32[8,128]");
  EXPECT_EQ(Verify("HloModule m", "  p = f32[8,7] parameter(0)\n  cs = (f32[8,128], f32[8,128], "
                                  "u32[]) copy-start(p)\n  ROOT r = f32[8,128] copy-done(cs)\n"),
            "v.hlo:4:3: error: '%cs' (copy-start): (f32[8,128], f32[8,128], u32[]) is not "
            "(f32[8,7], f32[8,7], context...), as its operand f32[8,7] gives");
  EXPECT_EQ(Verify(two, "  p = f32[4] parameter(0)\n  s = (f32[4], f32[8]) "
                        "collective-permute-start(p), source_target_pairs={{0,1},{1,0}}\n  ROOT r "
                        "= f32[8] collective-permute-done(s)\n"),
            "v.hlo:4:3: error: '%s' (collective-permute-start): (f32[4], f32[8]) is not (f32[4], "
            "f32[4], context...), as its operand f32[4] gives");
}

TEST(AsyncAndDynamicShapesTest, AsyncCallStartUpdateDone) {
  const std::string callee =
      "HloModule m\na {\n  x = f32[8,128] parameter(0)\n  ROOT n = f32[8,128] negate(x)\n}";
  auto call = [&](const std::string& start, const std::string& update, const std::string& done) {
    return Verify(callee, "  p = f32[8,128] parameter(0)\n  s = " + start +
                              " async-start(p), calls=a\n  u = " + update +
                              " async-update(s)\n  ROOT r = " + done + " async-done(u)\n");
  };
  const std::string ok = "((f32[8,128]), f32[8,128], s32[])";
  EXPECT_EQ(call(ok, ok, "f32[8,128]"), "");
  EXPECT_EQ(call(ok, ok, "f32[8,3]"),
            "v.hlo:10:8: error: '%r' (async-done): shape mismatch: the operands give f32[8,128] "
            "but the instruction is written as f32[8,3]");
  EXPECT_EQ(call(ok, "((f32[8,128]), f32[8,3], s32[])", "f32[8,3]"),
            "v.hlo:9:3: error: '%u' (async-update): shape mismatch: the operands give "
            "((f32[8,128]), f32[8,128], s32[]) but the instruction is written as ((f32[8,128]), "
            "f32[8,3], s32[])");
  const std::string bad = "((f32[8,128]), f32[8,3], s32[])";
  EXPECT_EQ(call(bad, bad, "f32[8,3]"),
            "v.hlo:8:3: error: '%s' (async-start): ((f32[8,128]), f32[8,3], s32[]) is not ((the "
            "operands' shapes), the called computation's result, context...)");
}

}  // namespace
}  // namespace tpusim::hlo
