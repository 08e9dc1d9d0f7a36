// Bad input gives a located error (file:line:col + source line + caret) — never a crash or a hang.
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

std::string ParseError(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "bad.hlo");
  EXPECT_FALSE(m.ok()) << "expected an error for:\n" << text;
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  return m.status().message();
}

// The first line of the message: "bad.hlo:L:C: error: ...".
std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

TEST(ParserErrorsTest, UnknownOpcodeWithCaret) {
  const std::string msg = ParseError(
      "HloModule m\nENTRY e {\n  %a = f32[4,8]{1,0} parameter(0)\n"
      "  %dot.3 = f32[4,4]{1,0} dott(f32[4,8]{1,0} %a, f32[4,8]{1,0} %a)\n}\n");
  EXPECT_EQ(FirstLine(msg), "bad.hlo:4:26: error: unknown opcode 'dott'");
  // Source line and caret under column 26.
  EXPECT_NE(msg.find("\n    %dot.3 = f32[4,4]{1,0} dott("), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n" + std::string(2 + 25, ' ') + "^"), std::string::npos) << msg;
}

TEST(ParserErrorsTest, TruncatedFile) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n")),
            "bad.hlo:4:1: error: unexpected end of file: computation '%e' opened at 2:9 is not "
            "closed with '}'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[2,")),
            "bad.hlo:3:13: error: unexpected end of file: expected a dimension size");
  EXPECT_EQ(FirstLine(ParseError("")), "bad.hlo:1:1: error: empty input: expected 'HloModule'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\n")),
            "bad.hlo:2:1: error: module has no computations");
}

TEST(ParserErrorsTest, UnbalancedBraces) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n}\n}\n")),
            "bad.hlo:5:1: error: expected computation name, got '}'");
  EXPECT_EQ(FirstLine(ParseError(
                "HloModule m\nENTRY e {\n  a = f32[] parameter(0), statistics_viz={x\n")),
            "bad.hlo:3:42: error: unbalanced '{': end of file before its '}'");
  EXPECT_EQ(FirstLine(ParseError(
                "HloModule m\nENTRY e {\n  a = f32[] parameter(0), statistics_viz={(]}\n}\n")),
            "bad.hlo:3:44: error: mismatched ']' (opened by '(' at 3:43)");
}

TEST(ParserErrorsTest, UndefinedOperandAndComputation) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
                                 "  ROOT b = f32[] add(a, c)\n}\n")),
            "bad.hlo:4:25: error: use of undefined instruction '%c' in computation '%e'");
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
                           "  z = f32[] constant(0)\n"
                           "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=%nope\n}\n")),
      "bad.hlo:5:57: error: unknown computation '%nope'");
}

TEST(ParserErrorsTest, DuplicateNames) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
                                 "  a = f32[] negate(a)\n}\n")),
            "bad.hlo:4:3: error: duplicate instruction name '%a' (first defined at 3:3)");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nc {\n  a = f32[] parameter(0)\n}\n"
                                 "c {\n  a = f32[] parameter(0)\n}\n")),
            "bad.hlo:5:1: error: duplicate computation name '%c' (first defined at 2:1)");
}

TEST(ParserErrorsTest, CyclicUse) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] negate(b)\n"
                                 "  b = f32[] negate(a)\n}\n")),
            "bad.hlo:4:3: error: cyclic use: '%b' uses '%a', which depends on '%b'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  a = f32[] negate(a)\n}\n")),
            "bad.hlo:3:3: error: cyclic use: '%a' uses itself");
  // Forward references without a cycle are fine and get reordered def-before-use.
  StatusOr<std::unique_ptr<HloModule>> ok = ParseHloModule(
      "HloModule m\nENTRY e {\n  ROOT b = f32[] negate(a)\n  a = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)->entry_computation()->instructions()[0]->name(), "a");
  EXPECT_EQ((*ok)->entry_computation()->root_instruction()->name(), "b");
}

TEST(ParserErrorsTest, CyclicCall) {
  EXPECT_EQ(FirstLine(ParseError(
                "HloModule m\nc1 {\n  a = f32[] parameter(0)\n"
                "  ROOT r = f32[] call(a), to_apply=c2\n}\n"
                "c2 {\n  a = f32[] parameter(0)\n  ROOT r = f32[] call(a), to_apply=c1\n}\n")),
            "bad.hlo:8:8: error: cyclic call: '%r' calls '%c1', which (transitively) calls '%c2'");
}

TEST(ParserErrorsTest, BadLiterals) {
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n")),
      "bad.hlo:3:28: error: bad literal: dimension 0 of f32[3] has 3 elements, the value has 2");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = s8[] constant(300)\n}\n")),
            "bad.hlo:3:26: error: bad literal: 300 is out of range for s8");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = pred[] constant(2)\n}\n")),
            "bad.hlo:3:28: error: bad literal: expected true or false, got '2'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}\n")),
            "bad.hlo:3:27: error: bad literal: expected an integer for s32, got '1.5'");
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, {2}})\n}\n")),
      "bad.hlo:3:32: error: bad literal: more than 1 nested levels of braces for f32[2]");
}

// XLA prints a type's extremes with 9 significant digits: f32's lowest is "-3.40282347e+38",
// beyond FLT_MAX in decimal but rounding to it. A literal is refused only when it rounds to
// infinity (at or past the largest value plus half an ulp), and one between the two holds the
// largest value.
TEST(ParserErrorsTest, FloatLiteralsThatRoundToTheLargestValue) {
  const auto value = [](std::string_view type, std::string_view v) {
    const std::string text = "HloModule m\nENTRY e {\n  ROOT c = " + std::string(type) +
                             "[] constant(" + std::string(v) + ")\n}\n";
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "ok.hlo");
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? (*m)->entry_computation()->root_instruction()->literal().float_values.at(0)
                  : 0.0;
  };
  EXPECT_EQ(value("f32", "-3.40282347e+38"), -static_cast<double>(3.40282346638528859812e+38f));
  EXPECT_EQ(value("f32", "3.40282346e+38"), 3.40282346e+38);
  EXPECT_EQ(value("f16", "65519"), 65504.0);
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(3.5e38)\n}\n")),
      "bad.hlo:3:27: error: bad literal: 3.5e38 is out of range for f32 (largest finite value "
      "3.40282e+38)");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT c = f16[] constant(65520)\n}\n")),
            "bad.hlo:3:27: error: bad literal: 65520 is out of range for f16 (largest finite value "
            "65504)");
}

TEST(ParserErrorsTest, OperandShapeDisagreesWithDefinition) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY %e {\n  %a = f32[4]{0} parameter(0)\n"
                                 "  ROOT %b = f32[3]{0} negate(f32[3]{0} %a)\n}\n")),
            "bad.hlo:4:40: error: operand 0 of '%b' is written as f32[3]{0} but '%a' is defined as "
            "f32[4]{0}");
}

TEST(ParserErrorsTest, MissingAttributeAndBadAttributeValues) {
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = (f32[]) parameter(0)\n"
                                 "  ROOT g = f32[] get-tuple-element(p)\n}\n")),
            "bad.hlo:4:8: error: '%g' (get-tuple-element) is missing attribute 'index'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                                 "  ROOT c = pred[2] compare(p, p), direction=LESS\n}\n")),
            "bad.hlo:4:45: error: unknown value 'LESS' for attribute 'direction'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), "
                                 "sharding={devices=[2,2]0,1}\n}\n")),
            "bad.hlo:3:46: error: tile assignment [2,2] needs 4 devices, 2 are listed");
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), "
                           "sharding={devices=[4,2]<=[2,2]}\n}\n")),
      "bad.hlo:3:51: error: iota tile assignment [4,2]<=[2,2]: 8 devices in the result but 4 in "
      "the iota");
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), dimensions={0}, "
                           "dimensions={0}\n}\n")),
      "bad.hlo:3:44: error: duplicate attribute 'dimensions'");
  // An attribute XLA's parser does not define is an error there, and here (issue 21 item 8).
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                                 "  ROOT a = f32[2] add(p, p), frobnicate=7\n}\n")),
            "bad.hlo:4:30: error: unknown attribute 'frobnicate' for add (XLA's HLO parser refuses "
            "attributes it does not define)");
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                           "  ROOT c = f32[2] convolution(p, p), dim_labels=b0f_0io->bb0\n}\n")),
      "bad.hlo:4:49: error: dim labels 'b0f_0io->bb0': each side needs each of its letters (b,f / "
      "i,o) and spatial digits 0..0 exactly once");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f32[2] wat[3] parameter(0)\n}\n")),
            "bad.hlo:3:14: error: unknown opcode 'wat'");
  EXPECT_EQ(FirstLine(ParseError("HloModule m\nENTRY e {\n  p = f33[2] parameter(0)\n}\n")),
            "bad.hlo:3:7: error: unknown or unsupported element type 'f33'");
  // XLA's sub-byte types (its f4e2m1fn convert test, its s2 <-> s8 tests): named as XLA's.
  EXPECT_EQ(FirstLine(ParseError(
                "f {\n  a = f32[4] parameter(0)\n  b = f4e2m1fn[4] convert(a)\n}\n")),
            "bad.hlo:3:7: error: element type 'f4e2m1fn' is one of XLA's sub-byte types (1- and "
            "2-bit integers, the 4-bit float f4e2m1fn) that tpusim does not model; it runs pred, "
            "s4/u4 to s64/u64, f16, bf16, f32, f64, c64, c128 and the f8 types");
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  p = s2[16] parameter(0)\n}\n")
                .find("bad.hlo:3:7: error: element type 's2' is one of XLA's sub-byte types"),
            std::string::npos);
}

TEST(ParserErrorsTest, HostileNestingIsCappedNotRecursedInto) {
  std::string deep = "HloModule m\nENTRY e {\n  p = ";
  for (int i = 0; i < 100000; ++i) deep += "(";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(deep, "deep.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("shape nesting deeper than 256 levels"), std::string::npos);

  std::string braces = "HloModule m\nENTRY e {\n  p = f32[] parameter(0), statistics_viz=";
  for (int i = 0; i < 100000; ++i) braces += "{";
  m = ParseHloModule(braces, "deep.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nested deeper than 256 levels"), std::string::npos);

  std::string shard = "HloModule m\nENTRY e {\n  p = f32[] parameter(0), sharding=";
  for (int i = 0; i < 100000; ++i) shard += "{";
  m = ParseHloModule(shard, "deep.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("sharding nested deeper than 256 levels"), std::string::npos);
}

TEST(ParserErrorsTest, GarbageNeverCrashes) {
  // Every prefix of a valid module either parses or fails with a located error.
  const std::string text =
      "HloModule m, replica_count=2\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[4,2]{1,0} parameter(0), "
      "sharding={devices=[2,1]<=[2]}\n  c = f32[] constant(-inf)\n"
      "  r = f32[4] reduce(p, c), dimensions={1}, to_apply=add, metadata={op_name=\"x\"}\n"
      "  ROOT g = f32[8] all-gather(r), replica_groups=[1,2]<=[2], dimensions={0}\n}\n";
  ASSERT_TRUE(ParseHloModule(text).ok());
  for (size_t n = 0; n < text.size(); ++n) {
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text.substr(0, n), "prefix.hlo");
    if (!m.ok()) {
      EXPECT_EQ(m.status().message().rfind("prefix.hlo:", 0), 0u) << m.status().message();
    }
  }
  // Single-byte corruptions.
  for (size_t n = 0; n < text.size(); n += 3) {
    std::string bad = text;
    bad[n] = "{}()[],=%\"x0-"[n % 13];
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(bad, "bad.hlo");
    if (!m.ok()) {
      EXPECT_EQ(m.status().message().rfind("bad.hlo:", 0), 0u) << m.status().message();
    }
  }
}

TEST(ParserErrorsTest, LayoutMustBeAPermutation) {
  // {1,1} names dimension 1 twice and never 0: not a layout (fuzzing / issue 8).
  EXPECT_EQ(
      FirstLine(ParseError("HloModule m\nENTRY e {\n  ROOT a = f32[4,8]{1,1} parameter(0)\n}\n")),
      "bad.hlo:3:23: error: layout dimension 1 appears twice");
}

}  // namespace
}  // namespace tpusim::hlo
