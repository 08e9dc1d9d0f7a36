// docs/isa.md, generated from the opcode table (opcodes.def) and the enum lists (types.h), so the
// document can never drift from the code: tests/isa/isa_doc_test.cc checks that the file equals
// GenerateIsaDoc(), and `tpusim asm --doc` prints it.
#pragma once

#include <string>

namespace tpusim::isa {

/// The complete Markdown text of docs/isa.md.
std::string GenerateIsaDoc();

}  // namespace tpusim::isa
