#include "isa/encoding.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "tests/isa/random_instruction.h"

namespace tpusim::isa {
namespace {

// ---- The table itself
// -------------------------------------------------------------------------------

// The table's own facts (unique mnemonics, field widths) are tests/isa/opcode_test.cc's.
TEST(OpcodeTable, EveryOpcodesFieldsFitOneWord) {
  for (const OpcodeInfo& info : AllOpcodes()) {
    EXPECT_LE(FieldBitOffset(info.opcode, static_cast<int>(info.fields.size())), kWordBits)
        << info.mnemonic;
  }
}

TEST(OpcodeTable, TypedViewMatchesGenericFields) {
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
                   .latch = true};
  Instruction inst = mm.ToInstruction();
  EXPECT_EQ(inst.opcode, Opcode::kMxuMatmul);
  EXPECT_EQ(inst.fields[FieldIndex(Opcode::kMxuMatmul, "acc")], 16u);
  EXPECT_EQ(inst.fields[FieldIndex(Opcode::kMxuMatmul, "part")],
            static_cast<uint64_t>(PrecisionPart::kLo));
  EXPECT_EQ(inst.As<op::MxuMatmul>(), mm);
  op::VpuCopy copy;  // (partial designated initializers trip -Wmissing-field-initializers)
  copy.dtype = DType::kS32;
  copy.n0 = 4;
  copy.src_s0 = -1;
  EXPECT_EQ(copy.ToInstruction().As<op::VpuCopy>().src_s0, -1);
}

// ---- decode(encode(i)) == i for every opcode, random legal fields
// ------------------------------------

class EveryOpcode : public ::testing::TestWithParam<int> {};

TEST_P(EveryOpcode, EncodeDecodeRoundTrip) {
  Opcode op = static_cast<Opcode>(GetParam());
  std::mt19937_64 rng(1234 + GetParam());
  for (int trial = 0; trial < 200; ++trial) {
    Instruction inst = testing::RandomInstruction(op, rng);
    ASSERT_TRUE(CheckInstructionFields(inst).ok());
    Word w = EncodeInstruction(inst);
    EXPECT_EQ(w[0] & 0xFF, static_cast<uint64_t>(op));  // opcode in bits [0,8)
    auto back = DecodeInstruction(w);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, inst) << FormatInstruction(inst);
  }
}

TEST_P(EveryOpcode, DisassembleAssembleRoundTrip) {
  Opcode op = static_cast<Opcode>(GetParam());
  std::mt19937_64 rng(99 + GetParam());
  for (int trial = 0; trial < 100; ++trial) {
    Instruction inst = testing::RandomInstruction(op, rng);
    std::string text = FormatInstruction(inst);
    auto back = AssembleInstruction(text);
    ASSERT_TRUE(back.ok()) << text << "\n" << back.status().message();
    EXPECT_EQ(*back, inst) << text;
  }
}

// Every value of every enum field (each DType, UnaryOp, ...) survives encode -> decode and
// disassemble -> assemble: a field too narrow for its enum (a 4-bit DType holding u4 = 16) would
// drop bits here, besides failing isa/opcode.cc's static_assert.
TEST_P(EveryOpcode, EveryEnumValueOfEveryEnumFieldRoundTrips) {
  Opcode op = static_cast<Opcode>(GetParam());
  std::mt19937_64 rng(7 + GetParam());
  const auto& fields = Info(op).fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    int count = EnumCardinality(fields[i].kind);
    for (int v = 0; v < count; ++v) {
      Instruction inst = testing::RandomInstruction(op, rng);
      inst.fields[i] = static_cast<uint64_t>(v);
      ASSERT_TRUE(CheckInstructionFields(inst).ok()) << fields[i].name << "=" << v;
      auto back = DecodeInstruction(EncodeInstruction(inst));
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(back->fields[i], static_cast<uint64_t>(v))
          << fields[i].name << " = " << EnumValueName(fields[i].kind, v);
      EXPECT_EQ(*back, inst) << FormatInstruction(inst);
      auto text = AssembleInstruction(FormatInstruction(inst));
      ASSERT_TRUE(text.ok()) << FormatInstruction(inst) << "\n" << text.status().message();
      EXPECT_EQ(*text, inst) << FormatInstruction(inst);
    }
  }
}

TEST(OpcodeTable, EveryDTypeRoundTripsThroughAVpuCopy) {
  // Loops over the DType enum's own count, so a type added later is covered without editing this
  // test; u4 (16) is the first value a 4-bit field cannot hold.
  ASSERT_GT(EnumCardinality(FieldKind::kDType), static_cast<int>(DType::kU4));
  for (int v = 0; v < EnumCardinality(FieldKind::kDType); ++v) {
    op::VpuCopy copy;
    copy.dtype = static_cast<DType>(v);
    copy.n0 = 1;
    Instruction inst = copy.ToInstruction();
    auto back = DecodeInstruction(EncodeInstruction(inst));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->As<op::VpuCopy>().dtype, static_cast<DType>(v)) << Name(static_cast<DType>(v));
  }
}

TEST_P(EveryOpcode, FieldWidthsAreEnforcedByTheDecoder) {
  // Setting the first bit past each field's width (when it is not itself a field) must be rejected:
  // set the bit just after the last field.
  Opcode op = static_cast<Opcode>(GetParam());
  Instruction inst;
  inst.opcode = op;
  const auto& fields = Info(op).fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    inst.fields[i] = static_cast<uint64_t>(fields[i].has_default ? fields[i].default_value : 0);
  }
  Word w = EncodeInstruction(inst);
  int end = FieldBitOffset(op, static_cast<int>(fields.size()));
  ASSERT_LT(end, kWordBits);
  w[end / 64] |= uint64_t{1} << (end % 64);
  auto st = DecodeInstruction(w);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("non-zero bits"), std::string::npos)
      << st.status().message();
}

INSTANTIATE_TEST_SUITE_P(Table, EveryOpcode, ::testing::Range(0, kNumOpcodes),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(Info(static_cast<Opcode>(p.param)).id);
                         });

TEST(Encoding, LayoutIsLsbFirstInTableOrder) {
  // sync.signal: opcode (8 bits) | flag (8 bits) | value (32 bits).
  Instruction inst = op::SyncSignal{.flag = 3, .value = 0xABCD}.ToInstruction();
  Word w = EncodeInstruction(inst);
  uint64_t expected =
      static_cast<uint64_t>(Opcode::kSyncSignal) | (uint64_t{3} << 8) | (uint64_t{0xABCD} << 16);
  EXPECT_EQ(w[0], expected);
  for (int i = 1; i < kWordU64s; ++i) EXPECT_EQ(w[i], 0u);
}

TEST(Encoding, FieldsStraddleWordBoundaries) {
  // dma.hbm_to_vmem: flag 8..16, src 16..56, dst 56..96 straddles words 0 and 1.
  op::DmaHbmToVmem dma;
  dma.flag = 1;
  dma.dst = 0xFFFFFFFFFFull;
  dma.elem_bytes = 4;
  dma.n0 = dma.n1 = dma.n2 = 1;
  Instruction inst = dma.ToInstruction();
  EXPECT_EQ(FieldBitOffset(Opcode::kDmaHbmToVmem, 2), 56);
  Word w = EncodeInstruction(inst);
  EXPECT_EQ(w[0] >> 56, 0xFFu);                    // low 8 bits of dst
  EXPECT_EQ(w[1] & 0xFFFFFFFFull, 0xFFFFFFFFull);  // next 32 bits of dst
}

TEST(Encoding, DecoderRejectsUnknownOpcodeAndBadEnum) {
  Word w{};
  w[0] = 0xFF;
  auto st = DecodeInstruction(w);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("unknown opcode"), std::string::npos);

  // vpu.unary with op = 63 (beyond the last UnaryOp).
  w = {};
  w[0] = static_cast<uint64_t>(Opcode::kVpuUnary) | (uint64_t{63} << 8);
  st = DecodeInstruction(w);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("field 'op'"), std::string::npos) << st.status().message();
}

// ---- Program files
// ------------------------------------------------------------------------------------

Program SampleProgram() {
  auto p = Assemble(R"(
.replica_groups 0 {0,1}
.permutation 0 {0,1},{1,0}
.hlo_name 0 "dot.1"
.data hbm core=0, addr=0x40, f32 1.0, 2.5, -3
.core 0
start:
  .hlo "dot.1"
  dma.hbm_to_vmem flag=0, src=0x40, dst=0, n0=3
  sync.wait flag=0
  .hlo none
  ctrl.loop count=2
    vpu.fill dtype=f32, dst=0x100, count=4, value=0.5
  ctrl.endloop
.core 1
  ici.all_reduce op=sum, dtype=f32, src=0, dst=0, count=4, group=0
)",
                    "sample.tasm");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

TEST(ProgramFile, EncodeDecodeRoundTrip) {
  Program p = SampleProgram();
  std::string bytes = EncodeProgram(p);
  EXPECT_EQ(bytes.substr(0, 4), "TPUS");
  auto back = DecodeProgram(bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, p);
}

TEST(ProgramFile, CorruptInputsGiveClearErrors) {
  std::string bytes = EncodeProgram(SampleProgram());
  auto expect_error = [](std::string_view b, std::string_view needle) {
    auto r = DecodeProgram(b, "x.tbin");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("x.tbin", 0), 0u) << r.status().message();
  };
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  expect_error(bad_magic, "bad magic");
  std::string bad_version = bytes;
  bad_version[4] = 7;
  expect_error(bad_version, "version 7");
  // Every truncation is an error, never a crash.
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeProgram(std::string_view(bytes).substr(0, n)).ok()) << n;
  }
  expect_error(bytes + "junk", "unexpected bytes");
  // A huge core count cannot make the decoder allocate.
  std::string big = bytes;
  big[8] = big[9] = big[10] = big[11] = static_cast<char>(0xFF);
  expect_error(big, "exceeds the file size");
}

TEST(ProgramFile, CorruptInstructionNamesCoreAndIndex) {
  Program p = SampleProgram();
  std::string bytes = EncodeProgram(p);
  // Core 1's only instruction is the last word before its metadata; find it by re-encoding.
  Word w = EncodeInstruction(p.cores[1].instructions[0]);
  std::string word(reinterpret_cast<const char*>(w.data()), kWordBytes);
  size_t at = bytes.rfind(word);
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(0xEE);  // unknown opcode
  auto r = DecodeProgram(bytes, "x.tbin");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("core 1 instruction 0: unknown opcode number 238"),
            std::string::npos)
      << r.status().message();
}

TEST(ProgramFile, DisassembleAssembleReproducesProgram) {
  Program p = SampleProgram();
  std::string text = Disassemble(p);
  auto back = Assemble(text, "sample.tasm");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  for (int c = 0; c < p.num_cores(); ++c) {
    EXPECT_EQ(back->cores[c].instructions, p.cores[c].instructions);
    EXPECT_EQ(back->cores[c].hlo_tags, p.cores[c].hlo_tags);
  }
  EXPECT_EQ(back->replica_groups, p.replica_groups);
  EXPECT_EQ(back->permutations, p.permutations);
  EXPECT_EQ(back->hlo_names, p.hlo_names);
  EXPECT_EQ(back->data, p.data);
  EXPECT_EQ(back->symbols, p.symbols);
  // And the listing is a fixed point.
  EXPECT_EQ(Disassemble(*back), text);
}

TEST(ProgramFile, HloTagStateCarriesAcrossCoreSections) {
  // Found by fuzz_asm: core 3's last instruction is tagged, core 9's is not. The assembler keeps
  // the `.hlo` state across `.core`, so the listing must say `.hlo none` before core 9's nop.
  auto p = Assemble(".core 9\nnop\n.core 3\n.hlo \"\"\nnop\n", "t.tasm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto back = Assemble(Disassemble(*p), "listing.tasm");
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (int c = 0; c < p->num_cores(); ++c) {
    for (size_t i = 0; i < p->cores[c].instructions.size(); ++i) {
      EXPECT_EQ(back->cores[c].hlo_tag(i), p->cores[c].hlo_tag(i)) << "core " << c;
    }
  }
  EXPECT_EQ(back->cores[9].hlo_tag(0), kNoHloTag);
}

}  // namespace
}  // namespace tpusim::isa

namespace tpusim::isa {
namespace {

}  // namespace
}  // namespace tpusim::isa

namespace tpusim::isa {
namespace {

TEST(ProgramBuilding, AppendKeepsMetadataAlignedAndRoundTrips) {
  Program p;
  p.cores.resize(1);
  op::SyncSignal sig;
  sig.flag = 2;
  sig.value = 1;
  p.cores[0].instructions.push_back(op::Nop{}.ToInstruction());  // pushed without metadata
  int32_t dot = p.AddHloName("dot.7");
  EXPECT_EQ(p.AddHloName("dot.7"), dot);  // found, not added twice
  p.cores[0].Append(sig.ToInstruction(), dot, 12);
  ASSERT_EQ(p.cores[0].hlo_tags, (std::vector<int32_t>{kNoHloTag, dot}));
  ASSERT_EQ(p.cores[0].source_lines, (std::vector<int32_t>{kNoSourceLine, 12}));
  EXPECT_TRUE(CheckProgramStructure(p).ok());
  auto back = DecodeProgram(EncodeProgram(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, p);
}

}  // namespace
}  // namespace tpusim::isa
