#include "isa/assembler.h"

#include <gtest/gtest.h>

#include <bit>

#include "isa/disassembler.h"

namespace tpusim::isa {
namespace {

TEST(Assembler, DefaultsCommentsLabelsAndSourceLines) {
  auto p = Assemble(R"(# a comment
; another
.core 0
top:  mxu.matmul mxu=0, lhs=0x40, stride=128, m=8, k=128, n=128, dtype=bf16, acc=0  # trailing
      ctrl.halt
)",
                    "t.tasm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->cores.size(), 1u);
  ASSERT_EQ(p->cores[0].instructions.size(), 2u);
  auto mm = p->cores[0].instructions[0].As<op::MxuMatmul>();
  EXPECT_EQ(mm.lhs, 0x40u);
  EXPECT_EQ(mm.part, PrecisionPart::kHi);  // default
  EXPECT_FALSE(mm.accumulate);             // default
  EXPECT_FALSE(mm.latch);                  // default
  EXPECT_EQ(p->cores[0].source_lines, (std::vector<int32_t>{4, 5}));
  ASSERT_EQ(p->symbols.size(), 1u);
  EXPECT_EQ(p->symbols[0].name, "top");
  EXPECT_EQ(p->symbols[0].index, 0);
  EXPECT_EQ(p->source_file, "t.tasm");
}

// A compiled listing names its HLO file with `.source`, but its instructions' lines are lines of
// the listing: errors must name the listing (exec of `tpusim compile -o x.tasm` named the .hlo
// with the listing's line 83962).
TEST(Assembler, SourceDirectiveDoesNotMoveTheLinesToAnotherFile) {
  auto p = Assemble(".source \"model.hlo\"\nctrl.halt\n", "x.tasm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->source_file, "x.tasm");
  EXPECT_EQ(p->cores[0].source_lines, (std::vector<int32_t>{2}));
}

// The one reader of unsigned operands (the assembler's fields and directives, exec's --dump).
TEST(Assembler, ParseUnsignedReadsDecimalAndHexOnly) {
  EXPECT_EQ(ParseUnsigned("0"), 0u);
  EXPECT_EQ(ParseUnsigned("1234"), 1234u);
  EXPECT_EQ(ParseUnsigned("0x1F"), 31u);
  EXPECT_EQ(ParseUnsigned("0XfF"), 255u);
  EXPECT_EQ(ParseUnsigned("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "0x", "-1", "+1", "12a", "0x1g", " 1", "18446744073709551616"}) {
    EXPECT_FALSE(ParseUnsigned(bad).has_value()) << bad;
  }
}

TEST(Assembler, ImmediatesFollowTheDtype) {
  auto f = AssembleInstruction("vpu.fill dtype=f32, dst=0, count=1, value=-1.5");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->As<op::VpuFill>().value, std::bit_cast<uint32_t>(-1.5f));
  auto i = AssembleInstruction("vpu.fill value=-7, dtype=s32, dst=0, count=1");  // any order
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->As<op::VpuFill>().value, static_cast<uint32_t>(-7));
  auto nan = AssembleInstruction("vpu.fill dtype=f32, dst=0, count=1, value=0x7fc00001");
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(nan->As<op::VpuFill>().value, 0x7fc00001u);
  EXPECT_EQ(FormatInstruction(*nan), "vpu.fill dtype=f32, dst=0x0, count=1, value=0x7fc00001");
}

TEST(Assembler, DataDirectiveEncodesLittleEndian) {
  auto p =
      Assemble(".data vmem core=0, addr=0x10, bf16 1.0, -2\n.data host core=0, addr=0, hex 0aff\n");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->data.size(), 2u);
  // bf16(1.0) = 0x3F80, bf16(-2.0) = 0xC000, little-endian bytes.
  EXPECT_EQ(p->data[0].bytes, std::string("\x80\x3f\x00\xc0", 4));
  EXPECT_EQ(p->data[0].space, MemSpace::kVmem);
  EXPECT_EQ(p->data[1].bytes, std::string("\x0a\xff", 2));
}

struct BadCase {
  const char* text;
  const char* expected;  // exact first line of the error
};

class AssemblerErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(AssemblerErrors, LocatedMessageWithCaret) {
  auto p = Assemble(GetParam().text, "bad.tasm");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  const std::string& msg = p.status().message();
  EXPECT_EQ(msg.substr(0, msg.find('\n')), GetParam().expected) << msg;
  EXPECT_NE(msg.find('^'), std::string::npos) << msg;  // the caret line
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AssemblerErrors,
    ::testing::Values(
        BadCase{"nop\n  mxu.matmull mxu=0\n",
                "bad.tasm:2:3: error: unknown instruction 'mxu.matmull'"},
        BadCase{"sync.wait flag=300\n",
                "bad.tasm:1:16: error: field 'flag' = 300: does not fit in 8 bits (max 255)"},
        BadCase{"sync.wait flg=3\n",
                "bad.tasm:1:11: error: sync.wait has no field 'flg' (fields: flag, value)"},
        BadCase{"sync.wait value=2\n",
                "bad.tasm:1:1: error: sync.wait: missing field 'flag' (sync flag of this core)"},
        BadCase{"sync.wait flag=1 value=2\n", "bad.tasm:1:18: error: expected ',' between fields"},
        BadCase{"sync.wait flag=1, flag=2\n", "bad.tasm:1:19: error: field 'flag' given twice"},
        BadCase{"vpu.unary op=expp, dtype=f32, dst=0, src=0, count=1\n",
                "bad.tasm:1:14: error: field 'op': 'expp' is not a UnaryOp (one of: neg, abs, exp, "
                "log, tanh, logistic, sqrt, rsqrt, floor, ceil, round_ne, sign, not, expm1, log1p, "
                "sin, cos, erf, round_afz, tan, cbrt, clz, popcnt, acos, acosh, asin, asinh, atan, "
                "atanh, cosh, sinh)"},
        BadCase{"vpu.fill dtype=f32, dst=0, count=1, value=abc\n",
                "bad.tasm:1:43: error: field 'value': 'abc' is not a valid f32 immediate"},
        BadCase{"ctrl.endloop\n", "bad.tasm:1:1: error: ctrl.endloop without a matching ctrl.loop"},
        // ctrl.break_unless outside every loop (before the first, after the last): asm accepted
        // it and only exec's verifier refused it, without a column.
        BadCase{"ctrl.break_unless space=vmem, addr=0x0\n",
                "bad.tasm:1:1: error: ctrl.break_unless outside a loop (it leaves the innermost "
                "ctrl.loop)"},
        BadCase{"ctrl.loop count=2\nctrl.break_unless space=vmem, addr=0x0\nctrl.endloop\n"
                "  ctrl.break_unless space=vmem, addr=0x0\n",
                "bad.tasm:4:3: error: ctrl.break_unless outside a loop (it leaves the innermost "
                "ctrl.loop)"},
        // A core in two replica groups of a table, a permutation's repeated source or target:
        // located at the repeated id (exec's verifier said "replica group entry 0: core 0
        // appears twice" without a line, and asm accepted them).
        BadCase{".replica_groups 0 {0,1},{2,1}\n.core 2\nnop\n",
                "bad.tasm:1:28: error: core 1 appears twice in this table (a core is in at most "
                "one replica group)"},
        BadCase{".permutation 0 {0,1},{0,2}\n.core 2\nnop\n",
                "bad.tasm:1:23: error: core 0 appears twice as a source of this permutation"},
        BadCase{".permutation 0 {0,1},{2,1}\n.core 2\nnop\n",
                "bad.tasm:1:25: error: core 1 appears twice as a target of this permutation"},
        BadCase{"nop\nctrl.loop count=3\nnop\n",
                "bad.tasm:2:1: error: core 0: ctrl.loop without a matching ctrl.endloop"},
        BadCase{".bogus 1\n",
                "bad.tasm:1:1: error: unknown directive '.bogus' (directives: .core, "
                ".replica_groups, .permutation, .hlo_name, .hlo, .data, .source)"},
        BadCase{".replica_groups 1 {0,1}\n",
                "bad.tasm:1:17: error: expected table index 0 (entries are numbered in order)"},
        BadCase{"sync.barrier group=0\n",
                "bad.tasm:1:1: error: group=0 refers to a missing replica group table entry "
                "(define it first with .replica_groups)"},
        BadCase{"x: nop\nx: nop\n", "bad.tasm:2:1: error: label 'x' defined twice"},
        BadCase{"vpu.copy dtype=f32, dst=0, src=0, n0=1, src_s0=-2147483649\n",
                "bad.tasm:1:48: error: field 'src_s0' = -2147483649: outside the signed 32-bit "
                "range [-2147483648, 2147483647]"}));

}  // namespace
}  // namespace tpusim::isa
