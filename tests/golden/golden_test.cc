// Golden tests of the compiler: tests/golden/<case>/ holds model.hlo and config (a config name);
// the expected assembly listing (expected.tasm, isa::Disassemble of the compiled program) and
// summary statistics (expected_stats.txt) are compared exactly. After an intended change in the
// lowering, regenerate them with scripts/regen_golden.sh and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "common/file_util.h"
#include "compiler/compile.h"
#include "config/config_loader.h"
#include "hlo/parser.h"
#include "isa/disassembler.h"
#include "isa/opcode.h"

namespace tpusim::compiler {
namespace {

namespace fs = std::filesystem;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Stats(const CompiledModule& c) {
  std::ostringstream os;
  os << "cores " << c.program.num_cores() << "\n";
  os << "hbm_bytes_used " << c.hbm_bytes_used << "\n";
  os << "peak_vmem_bytes " << c.peak_vmem_bytes << "\n";
  std::map<std::string, int64_t> counts;
  int64_t total = 0;
  for (const auto& core : c.program.cores) {
    for (const auto& inst : core.instructions) {
      ++counts[std::string(isa::Mnemonic(inst.opcode))];
      ++total;
    }
  }
  os << "instructions " << total << "\n";
  for (const auto& [name, n] : counts) os << "  " << name << " " << n << "\n";
  return os.str();
}

std::vector<std::string> Cases() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("tests/golden")) {
    if (e.is_directory() && fs::exists(e.path() / "model.hlo")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CompilerGoldenTest, ListingsAndStatsMatch) {
  const bool regen = std::getenv("TPUSIM_REGEN_GOLDEN") != nullptr;
  const auto cases = Cases();
  ASSERT_GE(cases.size(), 2u) << "no golden cases found under tests/golden";
  for (const std::string& dir : cases) {
    SCOPED_TRACE(dir);
    auto config_name = ReadFile(dir + "/config");
    ASSERT_TRUE(config_name.ok());
    auto config = config::LoadChipConfig(Trim(*config_name));
    ASSERT_TRUE(config.ok()) << config.status().message();
    auto module = hlo::ParseHloModuleFile(dir + "/model.hlo");
    ASSERT_TRUE(module.ok()) << module.status().message();
    auto compiled = Compile(**module, *config);
    ASSERT_TRUE(compiled.ok()) << compiled.status().message();
    const std::string listing = isa::Disassemble(compiled->program);
    const std::string stats = Stats(*compiled);
    if (regen) {
      ASSERT_TRUE(WriteFileAtomic(dir + "/expected.tasm", listing).ok());
      ASSERT_TRUE(WriteFileAtomic(dir + "/expected_stats.txt", stats).ok());
      continue;
    }
    auto want_listing = ReadFile(dir + "/expected.tasm");
    auto want_stats = ReadFile(dir + "/expected_stats.txt");
    ASSERT_TRUE(want_listing.ok() && want_stats.ok())
        << "missing expected files; run scripts/regen_golden.sh";
    EXPECT_EQ(stats, *want_stats) << "stats changed; review and run scripts/regen_golden.sh";
    EXPECT_EQ(listing, *want_listing) << "listing changed; review and run scripts/regen_golden.sh";
  }
}

}  // namespace
}  // namespace tpusim::compiler
