#include "isa/isa_doc.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/file_util.h"
#include "isa/opcode.h"

namespace tpusim::isa {
namespace {

// docs/isa.md must equal the text generated from the table. Set TPUSIM_REGENERATE_DOCS=1 to rewrite
// it.
TEST(IsaDoc, DocsFileMatchesTheTable) {
  const std::string path = "docs/isa.md";  // tests run from the repository root
  std::string generated = GenerateIsaDoc();
  if (const char* regen = std::getenv("TPUSIM_REGENERATE_DOCS");
      regen && std::string(regen) == "1") {
    ASSERT_TRUE(WriteFileAtomic(path, generated).ok());
  }
  auto file = ReadFile(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE(*file == generated)
      << "docs/isa.md is out of date with isa/opcodes.def; regenerate it with "
         "TPUSIM_REGENERATE_DOCS=1 ctest -R IsaDoc (or tpusim asm --doc > docs/isa.md)";
}

TEST(IsaDoc, EveryOpcodeAndFieldIsDocumented) {
  std::string doc = GenerateIsaDoc();
  for (const OpcodeInfo& info : AllOpcodes()) {
    EXPECT_NE(doc.find(fmt::format("### `{}`", info.mnemonic)), std::string::npos) << info.mnemonic;
    EXPECT_FALSE(info.doc.empty()) << info.mnemonic;
    for (const FieldSpec& f : info.fields)
      EXPECT_FALSE(f.doc.empty()) << info.mnemonic << "." << f.name;
  }
}

}  // namespace
}  // namespace tpusim::isa
