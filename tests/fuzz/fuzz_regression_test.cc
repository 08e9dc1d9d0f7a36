// Replays every input kept in tests/data/fuzz_regressions/<target>/ (crashes, hangs and sanitizer
// reports the fuzzers found, and hand-written hostile inputs) through the same entry points the
// libFuzzer targets use. Each must give OK or a clean error Status — never a crash (the test would
// die), never an internal error (a broken round trip), and an error must say what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "tests/fuzz/fuzz_entry_points.h"

namespace tpusim::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> RegressionFiles(Target target) {
  std::vector<std::string> files;
  const fs::path dir = fs::path("tests/data/fuzz_regressions") / std::string(TargetName(target));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());  // deterministic order in the log
  return files;
}

class FuzzRegressionTest : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzRegressionTest, EveryKeptInputGivesOkOrACleanError) {
  const std::vector<std::string> files = RegressionFiles(GetParam());
  ASSERT_FALSE(files.empty()) << "no inputs in tests/data/fuzz_regressions/"
                              << TargetName(GetParam());
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    StatusOr<std::string> input = ReadFile(file);
    ASSERT_TRUE(input.ok()) << input.status().message();
    Status status = RunFuzzTarget(GetParam(), *input);
    EXPECT_NE(status.code(), StatusCode::kInternal) << status.message();
    if (!status.ok()) {
      EXPECT_FALSE(status.message().empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressionTest,
                         ::testing::Values(Target::kHlo, Target::kAsm, Target::kDecode,
                                           Target::kConfig, Target::kPipeline,
                                           Target::kOutputPaths),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           return std::string(TargetName(info.param));
                         });

}  // namespace
}  // namespace tpusim::fuzz
