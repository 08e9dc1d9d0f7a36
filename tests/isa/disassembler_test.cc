// isa/disassembler.h: an instruction as assembly text — every field in table order, addresses in
// hex, other unsigned fields in decimal, signed fields with their sign, enum fields by name, Imm
// fields in the instruction's dtype — and a whole program with its header, tables, data segments
// in hex, `.core` sections, labels and `.hlo` markers. Round trips through the assembler are
// encoding_test.cc's (every opcode, random fields).
#include "isa/disassembler.h"

#include <gtest/gtest.h>

#include <string>

#include "isa/assembler.h"

namespace tpusim::isa {
namespace {

TEST(DisassemblerTest, FieldsInTableOrderWithTheirOwnSpelling) {
  op::MxuMatmul mm{.mxu = 1,
                   .lhs = 0x100,
                   .stride = 128,
                   .m = 8,
                   .k = 128,
                   .n = 64,
                   .dtype = DType::kF32,
                   .part = PrecisionPart::kLo,
                   .acc = 16,
                   .accumulate = true,
                   .latch = false};
  EXPECT_EQ(FormatInstruction(mm.ToInstruction()),
            "mxu.matmul mxu=1, lhs=0x100, stride=128, m=8, k=128, n=64, dtype=f32, part=lo, "
            "acc=16, accumulate=1, latch=0");
  EXPECT_EQ(FormatInstruction(op::Nop{}.ToInstruction()), "nop");
  op::VpuCopy copy;
  copy.dtype = DType::kS32;
  copy.n0 = 4;
  copy.src_s0 = -1;  // a signed stride keeps its sign
  const std::string text = FormatInstruction(copy.ToInstruction());
  EXPECT_NE(text.find("src_s0=-1"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("vpu.copy dtype=s32, ", 0), 0u) << text;
}

TEST(DisassemblerTest, ImmediatesPrintInTheInstructionsDtype) {
  auto fill = [](DType t, const char* value) {
    auto p = Assemble(std::string("vpu.fill dtype=") + std::string(Name(t)) +
                          ", dst=0x40, count=3, value=" + value + "\n",
                      "t.tasm");
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? FormatInstruction(p->cores[0].instructions[0]) : std::string();
  };
  EXPECT_EQ(fill(DType::kF32, "2.5"), "vpu.fill dtype=f32, dst=0x40, count=3, value=2.5");
  EXPECT_EQ(fill(DType::kF32, "3"), "vpu.fill dtype=f32, dst=0x40, count=3, value=3.0");
  EXPECT_EQ(fill(DType::kF32, "-1e-30"), "vpu.fill dtype=f32, dst=0x40, count=3, value=-1e-30");
  EXPECT_EQ(fill(DType::kS32, "-7"), "vpu.fill dtype=s32, dst=0x40, count=3, value=-7");
}

TEST(DisassemblerTest, AProgramListsItsTablesDataAndCores) {
  auto p = Assemble(R"(
.replica_groups 0 {0,1}
.permutation 0 {0,1}, {1,0}
.hlo_name 0 "dot.3"
.data vmem core=1, addr=0x10, u8 1, 171
.core 0
.hlo 0
start:
  nop
.core 1
.hlo none
  ctrl.halt
)",
                    "p.tasm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const std::string text = Disassemble(*p);
  for (const char* line : {".replica_groups 0 {0,1}\n", ".permutation 0 {0,1}, {1,0}\n",
                           ".hlo_name 0 \"dot.3\"\n", ".data vmem core=1, addr=0x10, hex 01ab\n",
                           ".core 0\n", "start:\n", "  .hlo 0\n", ".core 1\n", "  .hlo none\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
  }
  EXPECT_EQ(text.rfind("# tpusim program, version ", 0), 0u) << text;
  EXPECT_LT(text.find(".core 0\n"), text.find(".core 1\n"));
  // And it reads back to the same program (instructions, tables, data, tags; the source lines
  // become the listing's).
  auto back = Assemble(text, "back.tasm");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->cores.size(), p->cores.size());
  for (size_t c = 0; c < p->cores.size(); ++c) {
    EXPECT_EQ(back->cores[c].instructions, p->cores[c].instructions) << c;
    EXPECT_EQ(back->cores[c].hlo_tags, p->cores[c].hlo_tags) << c;
  }
  EXPECT_EQ(back->replica_groups, p->replica_groups);
  EXPECT_EQ(back->permutations, p->permutations);
  EXPECT_EQ(back->data, p->data);
  EXPECT_EQ(back->hlo_names, p->hlo_names);
}

}  // namespace
}  // namespace tpusim::isa
