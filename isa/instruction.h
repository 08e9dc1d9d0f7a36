// Instruction: one decoded instruction = an opcode + its operand field values in the order
// opcodes.def lists them. Two views of the same data:
//  * generic: `fields[i]` is the raw value of Info(opcode).fields[i] (unsigned value, sign-extended
//    two's complement for S fields, enum number, 0/1, or the 32 Imm bits); unused slots are 0, so
//    two Instructions compare equal exactly when they encode to the same bits.
//  * typed: op::<Id> structs generated from the table, e.g.
//        const auto mm = inst.As<op::MxuMatmul>();   // mm.mxu, mm.lhs, mm.m, mm.dtype, mm.latch
//        ... Instruction i = op::MxuPop{.mxu = 0, .acc = 0, ...}.ToInstruction();
//    Field types: U -> uint64_t, S -> int64_t, Bool -> bool, Imm -> uint32_t, enum kinds -> the
//    enum.
#pragma once

#include <array>
#include <cstdint>

#include "common/check.h"
#include "isa/opcode.h"
#include "isa/types.h"

namespace tpusim::isa {

struct Instruction {
  Opcode opcode = Opcode::kNop;
  std::array<uint64_t, kMaxFields> fields{};

  bool operator==(const Instruction&) const = default;

  /// The typed view; TPUSIM_CHECKs that `Op` matches `opcode`.
  template <typename Op>
  Op As() const {
    TPUSIM_CHECK(opcode == Op::kOpcode) << "Instruction::As: opcode mismatch";
    return Op::FromInstruction(*this);
  }
  template <typename Op>
  bool Is() const {
    return opcode == Op::kOpcode;
  }
};

namespace field_type {
template <FieldKind K>
struct Of;
template <>
struct Of<FieldKind::kU> {
  using T = uint64_t;
};
template <>
struct Of<FieldKind::kS> {
  using T = int64_t;
};
template <>
struct Of<FieldKind::kBool> {
  using T = bool;
};
template <>
struct Of<FieldKind::kImm> {
  using T = uint32_t;
};
template <>
struct Of<FieldKind::kDType> {
  using T = DType;
};
template <>
struct Of<FieldKind::kMemSpace> {
  using T = MemSpace;
};
template <>
struct Of<FieldKind::kUnaryOp> {
  using T = UnaryOp;
};
template <>
struct Of<FieldKind::kBinaryOp> {
  using T = BinaryOp;
};
template <>
struct Of<FieldKind::kCompareOp> {
  using T = CompareOp;
};
template <>
struct Of<FieldKind::kReduceOp> {
  using T = ReduceOp;
};
template <>
struct Of<FieldKind::kReduceAxis> {
  using T = ReduceAxis;
};
template <>
struct Of<FieldKind::kBroadcast> {
  using T = Broadcast;
};
template <>
struct Of<FieldKind::kActivation> {
  using T = Activation;
};
template <>
struct Of<FieldKind::kPrecisionPart> {
  using T = PrecisionPart;
};

template <FieldKind K>
typename Of<K>::T FromRaw(uint64_t raw) {
  using T = typename Of<K>::T;
  if constexpr (K == FieldKind::kS) {
    return static_cast<int64_t>(raw);
  } else if constexpr (K == FieldKind::kBool) {
    return raw != 0;
  } else {
    return static_cast<T>(raw);
  }
}
template <FieldKind K>
uint64_t ToRaw(typename Of<K>::T v) {
  if constexpr (K == FieldKind::kS) {
    return static_cast<uint64_t>(v);
  } else {
    return static_cast<uint64_t>(v);
  }
}
}  // namespace field_type

/// Typed operand structs, one per opcode: op::Nop, op::MxuMatmul, op::VpuBinary, ...
namespace op {
#define TPU_F(name, kind, bits, dflt, doc) typename field_type::Of<FieldKind::k##kind>::T name{};
#define TPU_OP(id, mnemonic, unit, fields, doc)                \
  struct id {                                                  \
    static constexpr Opcode kOpcode = Opcode::k##id;           \
    fields static id FromInstruction(const Instruction& inst); \
    Instruction ToInstruction() const;                         \
    bool operator==(const id&) const = default;                \
  };
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F

// Conversions (inline so every layer can use them without a table walk).
#define TPU_F(name, kind, bits, dflt, doc) \
  r.name = field_type::FromRaw<FieldKind::k##kind>(inst.fields[i++]);
#define TPU_OP(id, mnemonic, unit, fields, doc)            \
  inline id id::FromInstruction(const Instruction& inst) { \
    id r;                                                  \
    [[maybe_unused]] int i = 0;                            \
    fields(void) inst;                                     \
    return r;                                              \
  }
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F

#define TPU_F(name, kind, bits, dflt, doc) \
  inst.fields[i++] = field_type::ToRaw<FieldKind::k##kind>(name);
#define TPU_OP(id, mnemonic, unit, fields, doc)  \
  inline Instruction id::ToInstruction() const { \
    Instruction inst;                            \
    inst.opcode = kOpcode;                       \
    [[maybe_unused]] int i = 0;                  \
    fields return inst;                          \
  }
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F
}  // namespace op

}  // namespace tpusim::isa
