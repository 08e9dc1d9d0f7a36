// Every opcode tpusim's parser accepts (hlo/opcode.def, XLA's HLO_OPCODE_LIST as tpusim spells
// it) either lowers — a small module using it runs through `tpusim run`'s path
// (driver::RunModule: compile, simulate, check against the evaluator) on tpu-v4 and its check
// passes — or stops with the error `tpusim run` exits 2 on, located at the instruction
// ("FILE:LINE:COL: ... %name (opcode)", or its start's for a done) and saying what is supported.
// One module per opcode in tests/data/hlo/opcodes/
// <opcode>.hlo; its first line says which: `// OPCODE: expect: runs` or `// OPCODE: expect: error:
// TEXT` (TEXT a part of the message). A new opcode in the table fails this test until it has its
// module.
#include <gtest/gtest.h>

#include <string>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "driver/run_module.h"
#include "hlo/computation.h"
#include "hlo/opcode.h"
#include "hlo/parser.h"

namespace tpusim {
namespace {

using hlo::HloOpcode;

// Relative to the source tree, where the tests run.
std::string ModulePath(std::string_view opcode) {
  return "tests/data/hlo/opcodes/" + std::string(opcode) + ".hlo";
}

bool UsesOpcode(const hlo::HloModule& m, HloOpcode op) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == op) return true;
    }
  }
  return false;
}

class OpcodeSweepTest : public ::testing::TestWithParam<int> {};

TEST_P(OpcodeSweepTest, LowersOrIsALocatedErrorSayingWhatIsSupported) {
  const HloOpcode op = static_cast<HloOpcode>(GetParam());
  const std::string name(hlo::HloOpcodeString(op));
  const std::string path = ModulePath(name);
  StatusOr<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << "no module for opcode " << name << ": " << text.status().message();
  const std::string expect_tag = "// " + name + ": expect: ";
  ASSERT_EQ(text->rfind(expect_tag, 0), 0u) << path << " must start with '" << expect_tag << "'";
  const std::string expect = text->substr(expect_tag.size(), text->find('\n') - expect_tag.size());
  auto module = hlo::ParseHloModule(*text, path);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_TRUE(UsesOpcode(**module, op)) << path << " does not use " << name;

  static const config::ChipConfig chip = *config::LoadChipConfig("tpu-v4");
  StatusOr<driver::RunModuleResult> r = driver::RunModule(**module, chip, driver::RunOptions{});
  if (expect == "runs") {
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->check.performed) << r->check.reason;
    EXPECT_TRUE(r->check.passed) << r->check.reason;
    return;
  }
  const std::string error_tag = "error: ";
  ASSERT_EQ(expect.rfind(error_tag, 0), 0u) << "expect 'runs' or 'error: TEXT', got " << expect;
  ASSERT_FALSE(r.ok()) << name << " ran; its module says it should stop with: " << expect;
  const std::string& msg = r.status().message();
  EXPECT_EQ(ExitCodeFor(r.status().code()), 2) << msg;
  EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << "not located in " << path << ": " << msg;
  // A done that cannot run stops at its start, the pair's first half (send-done at its send).
  const std::string start = name.ends_with("-done") ? name.substr(0, name.size() - 5) : name;
  EXPECT_TRUE(msg.find(" (" + name + ")") != std::string::npos ||
              msg.find(" (" + start + ")") != std::string::npos)
      << "does not name " << name << ": " << msg;
  EXPECT_NE(msg.find(expect.substr(error_tag.size())), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(Opcodes, OpcodeSweepTest, ::testing::Range(0, hlo::kHloOpcodeCount),
                         [](const ::testing::TestParamInfo<int>& i) {
                           std::string n(hlo::HloOpcodeString(static_cast<HloOpcode>(i.param)));
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

}  // namespace
}  // namespace tpusim
