// The typed accessors of fields a family of opcodes shares (isa/shared_fields.h) read the same
// values the table's field names say, for every opcode of the family, and VisitOperands hands each
// opcode its own typed struct.
#include "isa/shared_fields.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "isa/opcode.h"
#include "tests/isa/random_instruction.h"

namespace tpusim::isa {
namespace {

// The raw value of field `name` of `inst`, by name (what the accessors replace), or -1.
int64_t ByName(const Instruction& inst, std::string_view name) {
  const int i = FieldIndex(inst.opcode, name);
  return i < 0 ? -1 : static_cast<int64_t>(inst.fields[static_cast<size_t>(i)]);
}

TEST(SharedFieldsTest, VisitOperandsPassesEachOpcodesOwnStruct) {
  std::mt19937_64 rng(19);
  for (const OpcodeInfo& info : AllOpcodes()) {
    const Instruction inst = testing::RandomInstruction(info.opcode, rng);
    const Instruction back =
        VisitOperands(inst, [](const auto& o) -> Instruction { return o.ToInstruction(); });
    EXPECT_EQ(back, inst) << info.mnemonic;
  }
}

TEST(SharedFieldsTest, FamilyFieldsAreTheNamedFields) {
  std::mt19937_64 rng(5);
  int mxu = 0, collectives = 0, grouped = 0;
  for (const OpcodeInfo& info : AllOpcodes()) {
    for (int trial = 0; trial < 20; ++trial) {
      const Instruction inst = testing::RandomInstruction(info.opcode, rng);
      // Every MXU opcode has an `mxu` field, and only MXU opcodes.
      EXPECT_EQ(ByName(inst, "mxu") >= 0, info.unit == Unit::kMxu) << info.mnemonic;
      if (info.unit == Unit::kMxu) {
        EXPECT_EQ(static_cast<int64_t>(MxuIndexOf(inst)), ByName(inst, "mxu"));
        mxu += trial == 0;
      }
      if (info.unit == Unit::kIci) {
        const CollectiveOperands c = CollectiveOperandsOf(inst);
        EXPECT_EQ(c.opcode, info.opcode);
        EXPECT_EQ(static_cast<int64_t>(c.dtype), ByName(inst, "dtype")) << info.mnemonic;
        EXPECT_EQ(static_cast<int64_t>(c.space), ByName(inst, "space")) << info.mnemonic;
        EXPECT_EQ(static_cast<int64_t>(c.src), ByName(inst, "src")) << info.mnemonic;
        EXPECT_EQ(static_cast<int64_t>(c.dst), ByName(inst, "dst")) << info.mnemonic;
        EXPECT_EQ(static_cast<int64_t>(c.count), ByName(inst, "count")) << info.mnemonic;
        const int64_t op = ByName(inst, "op");
        EXPECT_EQ(static_cast<int64_t>(c.op), op < 0 ? int64_t{0} : op) << info.mnemonic;
        collectives += trial == 0;
      }
      const std::optional<uint64_t> group = ReplicaGroupOf(inst);
      EXPECT_EQ(group.has_value(), ByName(inst, "group") >= 0) << info.mnemonic;
      if (group) {
        EXPECT_EQ(static_cast<int64_t>(*group), ByName(inst, "group"));
        grouped += trial == 0;
      }
    }
  }
  EXPECT_EQ(mxu, 3);          // load_weights, matmul, pop
  EXPECT_EQ(collectives, 5);  // all_reduce, all_gather, reduce_scatter, all_to_all, permute
  EXPECT_EQ(grouped, 5);      // sync.barrier and the four grouped collectives
}

// A strided DMA's spaces are the ones its mnemonic names (dma.FROM_to_TO), dma.vmem_to_remote's
// destination its dst_space.
TEST(SharedFieldsTest, DmaSpacesAreTheMnemonics) {
  std::mt19937_64 rng(7);
  int strided = 0;
  for (const OpcodeInfo& info : AllOpcodes()) {
    if (info.unit != Unit::kDma || info.opcode == Opcode::kDmaGather ||
        info.opcode == Opcode::kDmaScatter) {
      continue;
    }
    const Instruction inst = testing::RandomInstruction(info.opcode, rng);
    const DmaSpaces s = DmaSpacesOf(inst);
    const std::string_view name = info.mnemonic.substr(info.mnemonic.find('.') + 1);
    const size_t to = name.find("_to_");
    ASSERT_NE(to, std::string_view::npos) << info.mnemonic;
    EXPECT_EQ(EnumValueName(FieldKind::kMemSpace, static_cast<uint64_t>(s.from)),
              name.substr(0, to))
        << info.mnemonic;
    const std::string_view dst = name.substr(to + 4);
    EXPECT_EQ(s.to, dst == "remote" ? inst.As<op::DmaVmemToRemote>().dst_space
                                    : static_cast<MemSpace>(
                                          *ParseEnumValue(FieldKind::kMemSpace, dst)))
        << info.mnemonic;
    ++strided;
  }
  EXPECT_EQ(strided, 6);
}

// The side holding every member's piece is `count` elements per member; the other side `count`.
TEST(SharedFieldsTest, CollectiveElementsPerSide) {
  auto elements = [](Opcode op) {
    CollectiveOperands c;
    c.opcode = op;
    c.count = 10;
    return std::pair{c.InputElements(4), c.OutputElements(4)};
  };
  EXPECT_EQ(elements(Opcode::kIciAllReduce), (std::pair<uint64_t, uint64_t>{10, 10}));
  EXPECT_EQ(elements(Opcode::kIciAllGather), (std::pair<uint64_t, uint64_t>{10, 40}));
  EXPECT_EQ(elements(Opcode::kIciReduceScatter), (std::pair<uint64_t, uint64_t>{40, 10}));
  EXPECT_EQ(elements(Opcode::kIciAllToAll), (std::pair<uint64_t, uint64_t>{40, 40}));
  EXPECT_EQ(elements(Opcode::kIciCollectivePermute), (std::pair<uint64_t, uint64_t>{10, 10}));
  CollectiveOperands huge;  // saturates rather than wraps: the verifier refuses it by size
  huge.opcode = Opcode::kIciAllGather;
  huge.count = uint64_t{1} << 40;
  EXPECT_EQ(huge.OutputElements(uint64_t{1} << 30), UINT64_MAX);
}

}  // namespace
}  // namespace tpusim::isa
