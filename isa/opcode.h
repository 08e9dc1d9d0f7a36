// Opcode: the enum, the unit each instruction runs on, and the operand field specs — all generated
// from isa/opcodes.def. Generic code (encoder, decoder, assembler, disassembler, verifier, docs)
// walks OpcodeInfo(op).fields; code that knows its opcode uses the typed structs in instruction.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "isa/types.h"

namespace tpusim::isa {

/// Every instruction, numbered by its row in opcodes.def (the number is the encoded opcode).
enum class Opcode : uint8_t {
#define TPU_F(...)
#define TPU_OP(id, mnemonic, unit, fields, doc) k##id,
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F
};

/// Number of opcodes in the table.
inline constexpr int kNumOpcodes = 0
#define TPU_F(...)
#define TPU_OP(id, mnemonic, unit, fields, doc) +1
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F
    ;

/// The hardware unit an instruction occupies (one queue per unit instance in the simulator).
enum class Unit : uint8_t {
  kScalar,  // the core sequencer: control flow and sync flags
  kDma,     // a DMA engine
  kMxu,     // one of the core's MXUs (the instruction's `mxu` field says which)
  kVpu,     // the vector unit (8 sublanes x 128 lanes)
  kXlu,     // the transpose / permute unit
  kIci,     // the inter-chip interconnect (collectives)
};
std::string_view UnitName(Unit u);

/// The resource a core waiting on an instruction waits for: the one static per-opcode class behind
/// the simulator's stall categories (sim/sim_result.h StallCategoryOf) and `tpusim compare`'s
/// per-op bound. DMAs between HBM and VMEM (indirect ones too) are kHbm, host DMAs kHost, remote
/// DMAs and collectives kIci; mxu.pop drains through the vector path and dma.vmem_to_vmem uses
/// only the VMEM ports (kVpu); sync.wait and
/// sync.barrier are kSync; the rest of the scalar unit kScalar.
enum class Resource : uint8_t { kMxu, kHbm, kHost, kIci, kVpu, kSync, kScalar };
Resource ResourceOf(Opcode op);
inline constexpr size_t kResourceCount = static_cast<size_t>(Resource::kScalar) + 1;

/// The type of an operand field (opcodes.def "Kind").
enum class FieldKind : uint8_t {
  kU,
  kS,
  kBool,
  kImm,
  kDType,
  kMemSpace,
  kUnaryOp,
  kBinaryOp,
  kCompareOp,
  kReduceOp,
  kReduceAxis,
  kBroadcast,
  kActivation,
  kPrecisionPart,
};

/// One operand field of an opcode, as declared in opcodes.def.
struct FieldSpec {
  std::string_view name;
  FieldKind kind = FieldKind::kU;
  int bits = 0;               // encoded width, 1..64
  int64_t default_value = 0;  // meaningful when has_default
  bool has_default = false;   // the assembler may omit the field
  std::string_view doc;
};

/// Everything the table says about one opcode.
struct OpcodeInfo {
  Opcode opcode;
  std::string_view id;        // "MxuMatmul"
  std::string_view mnemonic;  // "mxu.matmul"
  Unit unit;
  std::span<const FieldSpec> fields;
  std::string_view doc;
};

/// Table lookups. Info() is valid for every Opcode value; ParseMnemonic returns nullopt for an
/// unknown mnemonic.
const OpcodeInfo& Info(Opcode op);
std::span<const OpcodeInfo> AllOpcodes();
std::string_view Mnemonic(Opcode op);
std::optional<Opcode> ParseMnemonic(std::string_view mnemonic);
/// Index of field `name` in Info(op).fields, or -1.
int FieldIndex(Opcode op, std::string_view name);

/// Number of distinct values of an enum field kind (e.g. 5 for kDType); 0 for non-enum kinds.
int EnumCardinality(FieldKind kind);
/// Assembly name of value `v` of an enum kind ("" if out of range), and the inverse (nullopt if
/// none).
std::string_view EnumValueName(FieldKind kind, uint64_t v);
std::optional<uint64_t> ParseEnumValue(FieldKind kind, std::string_view name);
std::string_view FieldKindName(FieldKind kind);  // "U", "DType", ...

/// The largest number of fields of any opcode (the size of Instruction::fields).
inline constexpr int kMaxFields = [] {
  int max = 0;
  int n = 0;
  (void)n;
#define TPU_F(...) ++n;
#define TPU_OP(id, mnemonic, unit, fields, doc) \
  n = 0;                                        \
  fields if (n > max) max = n;
#include "isa/opcodes.def"
#undef TPU_OP
#undef TPU_F
  return max;
}();

/// Architectural constants (documented in docs/isa.md).
inline constexpr int kNumSyncFlags = 256;  // per core; the `flag` fields are 8 bits
inline constexpr int kMaxLoopDepth = 8;    // nested ctrl.loop levels

}  // namespace tpusim::isa
