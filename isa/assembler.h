// Assembly text -> Program.
//
// Syntax (one statement per line; `#` or `;` starts a comment):
//   .core N                          following instructions belong to core N (default: core 0)
//   name:                            a label (alone or before an instruction)
//   mnemonic field=value, ...        an instruction; fields in any order; fields with a default
//                                    (docs/isa.md) may be omitted; values: decimal, 0x hex,
//                                    negative for S fields, enum names (bf16, vmem, add, hi, ...),
//                                    floats for Imm fields of float dtype (or 0x raw bits)
//   .replica_groups I {0,1},{2,3}    replica-group table entry I (entries in order 0, 1, ...)
//   .permutation I {0,1},{1,0}       collective-permute (source,target) pairs, table entry I
//   .hlo_name I "fusion.3"           HLO name table entry I
//   .hlo I | .hlo "name" | .hlo none HLO tag of the following instructions ("name" adds it if new)
//   .data SPACE core=C, addr=A, DTYPE v, v, ...   initial memory (DTYPE f32/bf16/s8/s32/pred)
//   .data SPACE core=C, addr=A, hex 00ff...       initial memory as raw bytes
//   .source "model.hlo"              what the program's source lines refer to
// Errors: InvalidArgument "file:line:col: error: message" with the line and a caret.
#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/program.h"

namespace tpusim::isa {

/// Assembles `text`; `file_name` is used in error messages and as Program::source_file. Each
/// instruction's source line is its line in `text` (a `.source` directive, which a compiled
/// listing carries to name its HLO file, is informational and does not change that).
/// Checks syntax, field names and value ranges, table references to existing entries and loop
/// nesting per core; semantic checks against a chip are the verifier's (verifier.h).
StatusOr<Program> Assemble(std::string_view text, std::string_view file_name = "<string>");

/// One instruction line without labels or directives (for tests and tools).
StatusOr<Instruction> AssembleInstruction(std::string_view line);

/// An unsigned integer as the assembler reads an operand: decimal, or hexadecimal after 0x/0X;
/// nullopt for anything else (empty, a sign, trailing characters, more than 64 bits).
std::optional<uint64_t> ParseUnsigned(std::string_view v);

}  // namespace tpusim::isa
