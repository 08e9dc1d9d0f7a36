#include "isa/opcode.h"

#include <array>
#include <climits>
#include <cstdint>

#include "common/check.h"

namespace tpusim::isa {
namespace {

// Per-opcode field arrays. A trailing sentinel keeps zero-field opcodes legal C++; spans exclude
// it.
#define TPU_F(name, kind, bits, dflt, doc) \
  FieldSpec{                               \
      #name, FieldKind::k##kind, bits, (dflt) == INT64_MIN ? 0 : (dflt), (dflt) != INT64_MIN, doc},
#define TPU_OP(id, mnemonic, unit, fields, doc) \
  constexpr FieldSpec k##id##Fields[] = {fields FieldSpec{}};
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F

#define TPU_F(...)
#define TPU_OP(id, mnemonic, unit, fields, doc)                                       \
  OpcodeInfo{Opcode::k##id,                                                           \
             #id,                                                                     \
             mnemonic,                                                                \
             Unit::unit,                                                              \
             std::span<const FieldSpec>(k##id##Fields, std::size(k##id##Fields) - 1), \
             doc},
constexpr OpcodeInfo kInfos[] = {
#include "isa/opcodes.def"
};
#undef TPU_OP
#undef TPU_F
static_assert(std::size(kInfos) == kNumOpcodes);

// Every opcode's fields must fit in one 512-bit word after the 8-bit opcode.
constexpr bool FieldsFit() {
  for (const OpcodeInfo& info : kInfos) {
    int total = 8;
    for (const FieldSpec& f : info.fields) {
      if (f.bits < 1 || f.bits > 64) return false;
      total += f.bits;
    }
    if (total > 512) return false;
  }
  return true;
}

}  // namespace

std::string_view UnitName(Unit u) {
  switch (u) {
    case Unit::kScalar:
      return "scalar";
    case Unit::kDma:
      return "dma";
    case Unit::kMxu:
      return "mxu";
    case Unit::kVpu:
      return "vpu";
    case Unit::kXlu:
      return "xlu";
    case Unit::kIci:
      return "ici";
  }
  return "?";
}

const OpcodeInfo& Info(Opcode op) {
  auto i = static_cast<size_t>(op);
  TPUSIM_CHECK(i < std::size(kInfos)) << "bad opcode " << i;
  return kInfos[i];
}

std::span<const OpcodeInfo> AllOpcodes() { return kInfos; }

std::string_view Mnemonic(Opcode op) { return Info(op).mnemonic; }

Resource ResourceOf(Opcode op) {
  switch (op) {
    case Opcode::kDmaHostToHbm:
    case Opcode::kDmaHbmToHost:
      return Resource::kHost;
    case Opcode::kDmaVmemToRemote:
      return Resource::kIci;
    case Opcode::kMxuPop:
    case Opcode::kDmaVmemToVmem:  // the VMEM ports, not HBM
      return Resource::kVpu;
    case Opcode::kSyncWait:
    case Opcode::kSyncBarrier:
      return Resource::kSync;
    default:
      break;
  }
  switch (Info(op).unit) {
    case Unit::kDma:
      return Resource::kHbm;
    case Unit::kMxu:
      return Resource::kMxu;
    case Unit::kVpu:
    case Unit::kXlu:
      return Resource::kVpu;
    case Unit::kIci:
      return Resource::kIci;
    case Unit::kScalar:
      break;
  }
  return Resource::kScalar;
}

std::optional<Opcode> ParseMnemonic(std::string_view mnemonic) {
  for (const OpcodeInfo& info : kInfos) {
    if (info.mnemonic == mnemonic) return info.opcode;
  }
  return std::nullopt;
}

int FieldIndex(Opcode op, std::string_view name) {
  const auto& fields = Info(op).fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {
template <typename E>
constexpr int CountOf();
#define TPUSIM_ISA_COUNT_(e, s) +1
template <>
constexpr int CountOf<DType>() {
  return 0 TPUSIM_ISA_DTYPE_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<MemSpace>() {
  return 0 TPUSIM_ISA_SPACE_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<UnaryOp>() {
  return 0 TPUSIM_ISA_UNARY_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<BinaryOp>() {
  return 0 TPUSIM_ISA_BINARY_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<CompareOp>() {
  return 0 TPUSIM_ISA_COMPARE_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<ReduceOp>() {
  return 0 TPUSIM_ISA_REDUCE_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<ReduceAxis>() {
  return 0 TPUSIM_ISA_AXIS_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<Broadcast>() {
  return 0 TPUSIM_ISA_BCAST_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<Activation>() {
  return 0 TPUSIM_ISA_ACTIVATION_LIST(TPUSIM_ISA_COUNT_);
}
template <>
constexpr int CountOf<PrecisionPart>() {
  return 0 TPUSIM_ISA_PART_LIST(TPUSIM_ISA_COUNT_);
}
#undef TPUSIM_ISA_COUNT_

// Calls f(tag) with a value of the enum type of `kind`; returns false for non-enum kinds.
template <typename F>
constexpr bool WithEnumType(FieldKind kind, F&& f) {
  switch (kind) {
    case FieldKind::kDType:
      f(DType{});
      return true;
    case FieldKind::kMemSpace:
      f(MemSpace{});
      return true;
    case FieldKind::kUnaryOp:
      f(UnaryOp{});
      return true;
    case FieldKind::kBinaryOp:
      f(BinaryOp{});
      return true;
    case FieldKind::kCompareOp:
      f(CompareOp{});
      return true;
    case FieldKind::kReduceOp:
      f(ReduceOp{});
      return true;
    case FieldKind::kReduceAxis:
      f(ReduceAxis{});
      return true;
    case FieldKind::kBroadcast:
      f(Broadcast{});
      return true;
    case FieldKind::kActivation:
      f(Activation{});
      return true;
    case FieldKind::kPrecisionPart:
      f(PrecisionPart{});
      return true;
    default:
      return false;
  }
}
}  // namespace

int EnumCardinality(FieldKind kind) {
  int n = 0;
  WithEnumType(kind, [&](auto tag) { n = CountOf<decltype(tag)>(); });
  return n;
}

std::string_view EnumValueName(FieldKind kind, uint64_t v) {
  std::string_view name;
  WithEnumType(kind, [&](auto tag) {
    using E = decltype(tag);
    if (v < static_cast<uint64_t>(CountOf<E>())) name = Name(static_cast<E>(v));
  });
  return name;
}

std::optional<uint64_t> ParseEnumValue(FieldKind kind, std::string_view name) {
  std::optional<uint64_t> out;
  WithEnumType(kind, [&](auto tag) {
    using E = decltype(tag);
    for (int i = 0; i < CountOf<E>(); ++i) {
      if (Name(static_cast<E>(i)) == name) out = static_cast<uint64_t>(i);
    }
  });
  return out;
}

std::string_view FieldKindName(FieldKind kind) {
  switch (kind) {
    case FieldKind::kU:
      return "U";
    case FieldKind::kS:
      return "S";
    case FieldKind::kBool:
      return "Bool";
    case FieldKind::kImm:
      return "Imm";
    case FieldKind::kDType:
      return "DType";
    case FieldKind::kMemSpace:
      return "MemSpace";
    case FieldKind::kUnaryOp:
      return "UnaryOp";
    case FieldKind::kBinaryOp:
      return "BinaryOp";
    case FieldKind::kCompareOp:
      return "CompareOp";
    case FieldKind::kReduceOp:
      return "ReduceOp";
    case FieldKind::kReduceAxis:
      return "ReduceAxis";
    case FieldKind::kBroadcast:
      return "Broadcast";
    case FieldKind::kActivation:
      return "Activation";
    case FieldKind::kPrecisionPart:
      return "PrecisionPart";
  }
  return "?";
}

static_assert(FieldsFit(), "an opcode's fields exceed the 512-bit instruction word");

namespace {
// Every enum field's width must hold every value of its enum (a DType field of 4 bits silently
// dropped the top bit of u4 = 16), so adding an enumerator past a field's range fails to compile.
constexpr bool EnumFieldsHoldTheirEnums() {
  for (const OpcodeInfo& info : kInfos) {
    for (const FieldSpec& f : info.fields) {
      int count = 0;
      WithEnumType(f.kind, [&](auto tag) { count = CountOf<decltype(tag)>(); });
      if (f.bits < 63 && count > (int64_t{1} << f.bits)) return false;
    }
  }
  return true;
}
}  // namespace

static_assert(EnumFieldsHoldTheirEnums(),
              "an enum field of isa/opcodes.def is too narrow for its enum's values");

}  // namespace tpusim::isa
