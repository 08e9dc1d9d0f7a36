// HloModule -> HLO text in XLA's style: `%`-prefixed names, operand shapes written inline
// (`add(f32[4]{0} %a, f32[4]{0} %b)`), full computation signatures. The output parses back to an
// equal module (see ModulesEqual in structural_equal.h); attributes kept raw are written back
// verbatim.
#pragma once

#include <string>

#include "hlo/attributes.h"
#include "hlo/module.h"

namespace tpusim::hlo {

std::string PrintModule(const HloModule& module);
std::string PrintComputation(const HloComputation& computation);
/// One instruction line without indentation: `[ROOT ]%name = shape opcode(operands), attrs`.
std::string PrintInstruction(const HloInstruction& instruction);
/// A literal's value text as in `constant(...)`: `5`, `{1, 2}`, `{ {1, 2}, {3, 4} }`, `{...}`, `(1,
/// 2)`.
std::string PrintLiteral(const LiteralValues& literal, const Shape& shape);

}  // namespace tpusim::hlo
