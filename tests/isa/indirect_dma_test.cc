// dma.gather / dma.scatter: encoding, assembly and the interpreter's golden semantics (clamped
// gather starts, skipped out-of-bounds scatter slices, read-modify-write combiners, duplicates).
#include "isa/indirect_dma.h"

#include <gtest/gtest.h>

#include <random>

#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "tests/isa/interpreter_test_util.h"
#include "tests/isa/random_instruction.h"

namespace tpusim::isa {
namespace {

using testing::ReadBf16;
using testing::ReadF32;
using testing::ReadS32;
using testing::RunAsm;
using testing::RunAsmStatus;
using testing::SmallChip;

TEST(IndirectDmaEncoding, RandomFieldsRoundTripThroughBitsAndText) {
  std::mt19937_64 rng(7);
  for (Opcode op : {Opcode::kDmaGather, Opcode::kDmaScatter}) {
    for (int i = 0; i < 200; ++i) {
      const Instruction inst = testing::RandomInstruction(op, rng);
      auto bits = EncodeInstruction(inst);
      auto back = DecodeInstruction(bits);
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(*back, inst) << Mnemonic(op);
      Program p;
      p.cores.resize(1);
      p.cores[0].instructions.push_back(inst);
      auto text = Disassemble(p);
      auto re = Assemble(text, "rt.tasm");
      ASSERT_TRUE(re.ok()) << re.status().message() << "\n" << text;
      EXPECT_EQ(re->cores[0].instructions[0], inst) << text;
    }
  }
}

TEST(IndirectDmaEncoding, TypedViewAndLastFieldPosition) {
  op::DmaScatter s{};
  s.flag = 3, s.src = 0x40, s.dst = 0x1000, s.elem_bytes = 2, s.n0 = 5, s.n1 = 1, s.n2 = 1;
  s.idx = 0x80, s.count = 7, s.idx_scale = 96, s.bound = (uint64_t{1} << 31) - 1;
  s.slice_stride = 10, s.combine = true, s.op = ReduceOp::kMax, s.dtype = DType::kBF16;
  const Instruction inst = s.ToInstruction();
  EXPECT_EQ(inst.As<op::DmaScatter>(), s);
  auto back = DecodeInstruction(EncodeInstruction(inst));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->As<op::DmaScatter>(), s);
  // 8 opcode bits + the 332-bit descriptor + 159 index bits + 8 combiner bits = 507 <= 512.
  int bits = 8;
  for (const FieldSpec& f : Info(Opcode::kDmaScatter).fields) bits += f.bits;
  EXPECT_EQ(bits, 507);
}

// HBM holds a [6,4] s32 table t[r][c] = 10*r + c at 0x0; gather rows by index.
constexpr const char* kTable = R"(
.data hbm core=0, addr=0x0, s32 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33, 40, 41, 42, 43, 50, 51, 52, 53
)";

TEST(IndirectDmaInterpreter, GatherClampsStartIndices) {
  Interpreter in(SmallChip());
  // Slices of 2 rows x 3 columns starting at row idx[j], column 1: bound = 6 - 2 = 4 rows.
  RunAsm(in, std::string(kTable) + R"(
.data vmem core=0, addr=0x0, s32 1, -5, 4, 9, 0
dma.gather flag=2, src=0x4, dst=0x100, elem_bytes=4, n0=3, n1=2, src_s1=16, dst_s1=12, idx=0x0, count=5, idx_scale=16, bound=4, slice_stride=24
sync.wait flag=2
)");
  const std::vector<int32_t> got = ReadS32(in.vmem(0), 0x100, 30);
  const int starts[] = {1, 0, 4, 4, 0};  // -5 -> 0, 9 -> 4 (clamped)
  for (int j = 0; j < 5; ++j) {
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(got[j * 6 + r * 3 + c], 10 * (starts[j] + r) + c + 1) << j << " " << r << c;
      }
    }
  }
  EXPECT_EQ(in.flag(0, 2), 0u);
}

TEST(IndirectDmaInterpreter, ScatterSkipsOutOfBoundsAndLastDuplicateWins) {
  Interpreter in(SmallChip());
  // Rows of 4 s32 into the [6,4] table, bound = 5: -1 and 6 are skipped, index 2 twice.
  RunAsm(in, std::string(kTable) + R"(
.data vmem core=0, addr=0x0, s32 2, -1, 6, 2, 5
.data vmem core=0, addr=0x100, s32 100, 101, 102, 103, 200, 201, 202, 203, 300, 301, 302, 303, 400, 401, 402, 403, 500, 501, 502, 503
dma.scatter flag=1, src=0x100, dst=0x0, n0=4, idx=0x0, count=5, idx_scale=16, bound=5, slice_stride=16
sync.wait flag=1
)");
  const std::vector<int32_t> t = ReadS32(in.hbm(0), 0x0, 24);
  EXPECT_EQ(std::vector<int32_t>(t.begin() + 8, t.begin() + 12),
            (std::vector<int32_t>{400, 401, 402, 403}));  // slice 3 overwrote slice 0
  EXPECT_EQ(std::vector<int32_t>(t.begin() + 20, t.begin() + 24),
            (std::vector<int32_t>{500, 501, 502, 503}));
  for (int r : {0, 1, 3, 4}) {  // untouched rows (200.., 300.. were skipped)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(t[r * 4 + c], 10 * r + c);
  }
}

TEST(IndirectDmaInterpreter, ScatterAddCombinesDuplicatesInOrder) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data hbm core=0, addr=0x0, f32 1, 2, 3, 4
.data vmem core=0, addr=0x0, s32 1, 1, 3, 0
.data vmem core=0, addr=0x40, f32 0.5, 0.25, 10, 7
dma.scatter flag=1, src=0x40, dst=0x0, n0=1, idx=0x0, count=4, idx_scale=4, bound=3, slice_stride=4, combine=1, op=sum, dtype=f32
dma.scatter flag=1, src=0x40, dst=0x0, n0=1, idx=0x0, count=2, idx_scale=4, bound=3, slice_stride=8, combine=1, op=max, dtype=f32
sync.wait flag=1, value=2
)");
  // add: [1+7, 2+0.5+0.25, 3, 4+10]; then max with 0.5 at index 1 and 10 at index 1: 10.
  EXPECT_EQ(ReadF32(in.hbm(0), 0x0, 4), (std::vector<float>{8, 10, 3, 14}));
}

TEST(IndirectDmaInterpreter, Bf16AddRoundsOnceAndS32Wraps) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data hbm core=0, addr=0x0, bf16 1, 256
.data hbm core=0, addr=0x100, s32 2147483647
.data vmem core=0, addr=0x0, s32 0, 1
.data vmem core=0, addr=0x40, bf16 0.00390625, 1
.data vmem core=0, addr=0x80, s32 1
dma.scatter flag=1, src=0x40, dst=0x0, elem_bytes=2, n0=1, idx=0x0, count=2, idx_scale=2, bound=1, slice_stride=2, combine=1, op=sum, dtype=bf16
dma.scatter flag=1, src=0x80, dst=0x100, n0=1, idx=0x0, count=1, idx_scale=4, bound=0, slice_stride=4, combine=1, op=sum, dtype=s32
sync.wait flag=1, value=2
)");
  // 1 + 2^-8 = 1.00390625 rounds to bf16 1 (ties to even); 256 + 1 = 257 rounds to 256.
  EXPECT_EQ(ReadBf16(in.hbm(0), 0x0, 2), (std::vector<float>{1, 256}));
  EXPECT_EQ(ReadS32(in.hbm(0), 0x100, 1)[0], INT32_MIN);
}

TEST(IndirectDmaInterpreter, RuntimeAndVerifierErrors) {
  {
    Interpreter in(SmallChip());
    // combine=1 in pred is not a combiner type: the verifier rejects it.
    auto p = Assemble(
        "dma.scatter flag=1, src=0x0, dst=0x0, elem_bytes=1, n0=1, idx=0x0, count=1, "
        "idx_scale=1, bound=0, slice_stride=1, combine=1, dtype=pred\n",
        "bad.tasm");
    ASSERT_TRUE(p.ok());
    Status v = Verify(*p, SmallChip());
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.message().find("field 'dtype'"), std::string::npos) << v.message();
  }
  {
    // The HBM extent a maximal index can reach is checked statically.
    auto p = Assemble(
        "dma.gather flag=1, src=0x0, dst=0x0, n0=4, idx=0x0, count=1, idx_scale=0x100000, "
        "bound=64, slice_stride=16\n",
        "bad.tasm");
    ASSERT_TRUE(p.ok());
    Status v = Verify(*p, SmallChip());
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.message().find("field 'src'"), std::string::npos) << v.message();
  }
  {
    // count = 0 is rejected by the verifier and the interpreter alike.
    Interpreter in(SmallChip());
    Status st = RunAsmStatus(
        in,
        "dma.gather flag=1, src=0x0, dst=0x0, n0=4, idx=0x0, count=0, idx_scale=16, bound=0, "
        "slice_stride=16\n");
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("count must be >= 1"), std::string::npos) << st.message();
  }
}

TEST(IndirectDmaDescriptor, ExtentsCoverEveryReachableByte) {
  op::DmaGather g{};
  g.src = 0x1000, g.dst = 0x40, g.elem_bytes = 4, g.n0 = 3, g.n1 = 2, g.n2 = 1;
  g.src_s1 = 16, g.dst_s1 = 12, g.idx = 0, g.count = 5, g.idx_scale = 16, g.bound = 4;
  g.slice_stride = 24;
  const IndirectDma d = IndirectDma::From(g.ToInstruction());
  EXPECT_FALSE(d.scatter);
  EXPECT_EQ(d.hbm_base(), 0x1000u);
  EXPECT_EQ(d.hbm_extent(), 4u * 16 + 16 + 12);  // bound * scale + (n1-1)*s1 + n0*4
  EXPECT_EQ(d.vmem_base(), 0x40u);
  EXPECT_EQ(d.vmem_extent(), 4u * 24 + 12 + 12);  // (count-1) * stride + (n1-1)*12 + n0*4
  EXPECT_EQ(d.total_bytes(), 5u * 24);
}

}  // namespace
}  // namespace tpusim::isa
