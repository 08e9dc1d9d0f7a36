// Program -> assembly text (the syntax assembler.h reads). Assemble(Disassemble(p)) gives back p's
// instructions, tables, data segments, symbols and HLO tags exactly (source lines become the
// listing's own line numbers).
#pragma once

#include <string>

#include "isa/instruction.h"
#include "isa/program.h"

namespace tpusim::isa {

/// "mxu.matmul mxu=0, lhs=0x0, stride=128, ..." — every field, in table order. Addresses print in
/// hex; Imm fields print in the instruction's dtype (a float, an integer, or 0x-bits for a NaN
/// payload).
std::string FormatInstruction(const Instruction& inst);

/// The whole program as assembly: header comment, tables, data segments, then one `.core` section
/// per core with labels and `.hlo` markers.
std::string Disassemble(const Program& program);

}  // namespace tpusim::isa
