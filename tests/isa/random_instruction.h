// Random legal instructions for round-trip tests: every field drawn uniformly from its legal range,
// as the table declares it (so the test follows the table automatically).
#pragma once

#include <random>

#include "isa/instruction.h"
#include "isa/opcode.h"

namespace tpusim::isa::testing {

inline Instruction RandomInstruction(Opcode op, std::mt19937_64& rng) {
  Instruction inst;
  inst.opcode = op;
  const auto& fields = Info(op).fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldSpec& f = fields[i];
    uint64_t r = rng();
    switch (f.kind) {
      case FieldKind::kU:
      case FieldKind::kImm:
        inst.fields[i] = f.bits >= 64 ? r : (r & ((uint64_t{1} << f.bits) - 1));
        break;
      case FieldKind::kS: {
        // Sign-extend the low `bits` bits.
        int shift = 64 - f.bits;
        inst.fields[i] = static_cast<uint64_t>(static_cast<int64_t>(r << shift) >> shift);
        break;
      }
      case FieldKind::kBool:
        inst.fields[i] = r & 1;
        break;
      default:
        inst.fields[i] = r % static_cast<uint64_t>(EnumCardinality(f.kind));
    }
  }
  return inst;
}

}  // namespace tpusim::isa::testing
