// isa/opcode.h: the table opcodes.def generates — unique mnemonics that parse back, fields that
// fit their encoded widths, field lookup by name, the unit and the stall resource of each opcode,
// and the enum field kinds' value names.
#include "isa/opcode.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace tpusim::isa {
namespace {

TEST(OpcodeTable, MnemonicsAreUniqueAndParse) {
  std::set<std::string_view> seen;
  for (const OpcodeInfo& info : AllOpcodes()) {
    EXPECT_TRUE(seen.insert(info.mnemonic).second) << info.mnemonic;
    ASSERT_TRUE(ParseMnemonic(info.mnemonic).has_value());
    EXPECT_EQ(*ParseMnemonic(info.mnemonic), info.opcode);
    EXPECT_EQ(Mnemonic(info.opcode), info.mnemonic);
    EXPECT_EQ(&Info(info.opcode), &info);  // Info() is the table row
    std::set<std::string_view> names;
    for (const FieldSpec& f : info.fields) {
      EXPECT_TRUE(names.insert(f.name).second) << info.mnemonic << "." << f.name;
      EXPECT_GE(f.bits, 1);
      EXPECT_LE(f.bits, 64);
      if (EnumCardinality(f.kind) > 0) {
        // The encoded width must hold every enumerator.
        EXPECT_LE(EnumCardinality(f.kind), 1 << f.bits) << info.mnemonic << "." << f.name;
      }
    }
    EXPECT_LE(static_cast<int>(info.fields.size()), kMaxFields);
  }
  EXPECT_EQ(AllOpcodes().size(), static_cast<size_t>(kNumOpcodes));
  EXPECT_FALSE(ParseMnemonic("mxu.matmull").has_value());
  EXPECT_FALSE(ParseMnemonic("").has_value());
}

TEST(OpcodeTable, TheFirstRowsAndTheirFields) {
  // Opcode numbers are the rows' order (they are the encoding): nop is 0.
  EXPECT_EQ(static_cast<int>(Opcode::kNop), 0);
  EXPECT_EQ(Info(Opcode::kNop).fields.size(), 0u);
  const OpcodeInfo& wait = Info(Opcode::kSyncWait);
  EXPECT_EQ(wait.id, "SyncWait");
  EXPECT_EQ(wait.mnemonic, "sync.wait");
  EXPECT_EQ(wait.unit, Unit::kScalar);
  ASSERT_EQ(wait.fields.size(), 2u);
  EXPECT_EQ(wait.fields[0].name, "flag");
  EXPECT_EQ(wait.fields[0].bits, 8);  // kNumSyncFlags = 256 flags
  EXPECT_FALSE(wait.fields[0].has_default);
  EXPECT_EQ(wait.fields[1].name, "value");
  EXPECT_TRUE(wait.fields[1].has_default);
  EXPECT_EQ(wait.fields[1].default_value, 1);
  EXPECT_EQ(1 << wait.fields[0].bits, kNumSyncFlags);
}

TEST(OpcodeTable, FieldIndexFindsAFieldByNameOrSaysMinusOne) {
  EXPECT_EQ(FieldIndex(Opcode::kMxuMatmul, "mxu"), 0);
  EXPECT_EQ(FieldIndex(Opcode::kMxuMatmul, "latch"),
            static_cast<int>(Info(Opcode::kMxuMatmul).fields.size()) - 1);
  EXPECT_EQ(Info(Opcode::kMxuMatmul).fields[FieldIndex(Opcode::kMxuMatmul, "dtype")].kind,
            FieldKind::kDType);
  EXPECT_EQ(FieldIndex(Opcode::kMxuMatmul, "nope"), -1);
  EXPECT_EQ(FieldIndex(Opcode::kNop, "flag"), -1);
}

TEST(OpcodeTable, UnitsAndTheirNames) {
  EXPECT_EQ(Info(Opcode::kCtrlLoop).unit, Unit::kScalar);
  EXPECT_EQ(Info(Opcode::kDmaHbmToVmem).unit, Unit::kDma);
  EXPECT_EQ(Info(Opcode::kMxuPop).unit, Unit::kMxu);
  EXPECT_EQ(Info(Opcode::kVpuBinary).unit, Unit::kVpu);
  EXPECT_EQ(Info(Opcode::kXluTranspose).unit, Unit::kXlu);
  EXPECT_EQ(Info(Opcode::kIciAllGather).unit, Unit::kIci);
  EXPECT_EQ(UnitName(Unit::kScalar), "scalar");
  EXPECT_EQ(UnitName(Unit::kDma), "dma");
  EXPECT_EQ(UnitName(Unit::kMxu), "mxu");
  EXPECT_EQ(UnitName(Unit::kVpu), "vpu");
  EXPECT_EQ(UnitName(Unit::kXlu), "xlu");
  EXPECT_EQ(UnitName(Unit::kIci), "ici");
}

// The stall resource: by unit, with the exceptions opcode.h documents (host and remote DMAs,
// dma.vmem_to_vmem, mxu.pop, the two waits).
TEST(OpcodeTable, ResourceOfFollowsTheUnitWithItsDocumentedExceptions) {
  EXPECT_EQ(ResourceOf(Opcode::kDmaHbmToVmem), Resource::kHbm);
  EXPECT_EQ(ResourceOf(Opcode::kDmaVmemToHbm), Resource::kHbm);
  EXPECT_EQ(ResourceOf(Opcode::kDmaGather), Resource::kHbm);  // indirect DMAs too
  EXPECT_EQ(ResourceOf(Opcode::kDmaScatter), Resource::kHbm);
  EXPECT_EQ(ResourceOf(Opcode::kDmaHostToHbm), Resource::kHost);
  EXPECT_EQ(ResourceOf(Opcode::kDmaHbmToHost), Resource::kHost);
  EXPECT_EQ(ResourceOf(Opcode::kDmaVmemToRemote), Resource::kIci);
  EXPECT_EQ(ResourceOf(Opcode::kDmaVmemToVmem), Resource::kVpu);  // the VMEM ports only
  EXPECT_EQ(ResourceOf(Opcode::kMxuMatmul), Resource::kMxu);
  EXPECT_EQ(ResourceOf(Opcode::kMxuLoadWeights), Resource::kMxu);
  EXPECT_EQ(ResourceOf(Opcode::kMxuPop), Resource::kVpu);  // drains through the vector path
  EXPECT_EQ(ResourceOf(Opcode::kVpuReduce), Resource::kVpu);
  EXPECT_EQ(ResourceOf(Opcode::kXluTranspose), Resource::kVpu);
  EXPECT_EQ(ResourceOf(Opcode::kIciAllReduce), Resource::kIci);
  EXPECT_EQ(ResourceOf(Opcode::kSyncWait), Resource::kSync);
  EXPECT_EQ(ResourceOf(Opcode::kSyncBarrier), Resource::kSync);
  EXPECT_EQ(ResourceOf(Opcode::kSyncSignal), Resource::kScalar);
  EXPECT_EQ(ResourceOf(Opcode::kCtrlLoop), Resource::kScalar);
  EXPECT_EQ(kResourceCount, 7u);
  for (const OpcodeInfo& info : AllOpcodes()) {
    EXPECT_LT(static_cast<size_t>(ResourceOf(info.opcode)), kResourceCount) << info.mnemonic;
  }
}

TEST(OpcodeTable, EnumFieldKindsNameAndParseEveryValue) {
  for (FieldKind k : {FieldKind::kDType, FieldKind::kMemSpace, FieldKind::kUnaryOp,
                      FieldKind::kBinaryOp, FieldKind::kCompareOp, FieldKind::kReduceOp,
                      FieldKind::kReduceAxis, FieldKind::kBroadcast, FieldKind::kActivation,
                      FieldKind::kPrecisionPart}) {
    const int n = EnumCardinality(k);
    ASSERT_GT(n, 0) << FieldKindName(k);
    for (int v = 0; v < n; ++v) {
      const std::string_view name = EnumValueName(k, static_cast<uint64_t>(v));
      ASSERT_FALSE(name.empty()) << FieldKindName(k) << " " << v;
      EXPECT_EQ(ParseEnumValue(k, name), static_cast<uint64_t>(v)) << name;
    }
    EXPECT_EQ(EnumValueName(k, static_cast<uint64_t>(n)), "");  // one past the last
    EXPECT_FALSE(ParseEnumValue(k, "no_such_value").has_value());
  }
  EXPECT_EQ(EnumCardinality(FieldKind::kMemSpace), 5);  // hbm vmem acc smem host
  EXPECT_EQ(EnumCardinality(FieldKind::kPrecisionPart), 3);
  EXPECT_EQ(EnumValueName(FieldKind::kMemSpace, 1), "vmem");
  EXPECT_EQ(ParseEnumValue(FieldKind::kBinaryOp, "mulhi"),
            static_cast<uint64_t>(BinaryOp::kMulhi));
  // Non-enum kinds have no values.
  for (FieldKind k : {FieldKind::kU, FieldKind::kS, FieldKind::kBool, FieldKind::kImm}) {
    EXPECT_EQ(EnumCardinality(k), 0) << FieldKindName(k);
    EXPECT_EQ(EnumValueName(k, 0), "");
    EXPECT_FALSE(ParseEnumValue(k, "0").has_value());
  }
  EXPECT_EQ(FieldKindName(FieldKind::kU), "U");
  EXPECT_EQ(FieldKindName(FieldKind::kDType), "DType");
  EXPECT_EQ(FieldKindName(FieldKind::kPrecisionPart), "PrecisionPart");
}

}  // namespace
}  // namespace tpusim::isa
