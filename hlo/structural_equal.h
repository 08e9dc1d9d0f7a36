// Structural equality of HLO modules: the contract the printer/parser round trip is tested against.
// Two modules are equal when they have the same header attributes, the same computations (by name,
// in order) with the same entry, and instruction by instruction the same name, opcode, shape
// (including layout and dynamic dimensions), operands (by name), called computations (by name) and
// every typed and raw attribute. Source locations are ignored.
#pragma once

#include <string>

#include "hlo/module.h"

namespace tpusim::hlo {

/// True if equal; otherwise false and, when `difference` is non-null, a one-line description of the
/// first difference found (e.g. "computation 'main', instruction 'add.3': shape f32[4] vs f32[5]").
bool ModulesEqual(const HloModule& a, const HloModule& b, std::string* difference = nullptr);

/// Same comparison for two instructions (operands and callees compared by name).
bool InstructionsEqual(const HloInstruction& a, const HloInstruction& b,
                       std::string* difference = nullptr);

}  // namespace tpusim::hlo
