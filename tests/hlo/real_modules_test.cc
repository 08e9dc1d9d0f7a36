// Every real module (in-repo Apache-2.0 copies and the shared corpus) parses, verifies and
// round-trips: parse(print(parse(x))) is structurally equal to parse(x), and printing is a fixed
// point.
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/structural_equal.h"
#include "hlo/verifier.h"
#include "tests/hlo/hlo_test_util.h"

namespace tpusim::hlo {
namespace {

void CheckModuleFile(const std::string& path) {
  SCOPED_TRACE(path);
  StatusOr<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(*text, path);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_GT((*m)->instruction_count(), 0);
  ASSERT_NE((*m)->entry_computation(), nullptr);
  Status v = VerifyModule(**m, *text);
  EXPECT_TRUE(v.ok()) << v.message();

  const std::string printed = PrintModule(**m);
  StatusOr<std::unique_ptr<HloModule>> m2 = ParseHloModule(printed, "printed");
  ASSERT_TRUE(m2.ok()) << m2.status().message();
  std::string diff;
  EXPECT_TRUE(ModulesEqual(**m, **m2, &diff)) << diff;
  EXPECT_EQ(PrintModule(**m2), printed);
  EXPECT_TRUE(VerifyModule(**m2, printed).ok());
}

TEST(RealModulesTest, InRepoModulesParseVerifyAndRoundTrip) {
  const std::vector<std::string> files = testing::HloFilesIn("tests/data/hlo");
  ASSERT_GE(files.size(), 8u) << "tests/data/hlo/*.hlo missing (run from the repository root)";
  for (const std::string& f : files) CheckModuleFile(f);
}

TEST(RealModulesTest, SharedCorpusParsesVerifiesAndRoundTrips) {
  const std::string dir = testing::SharedRealDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/hlo/real not present; shared-corpus test skipped";
  const std::vector<std::string> files = testing::HloFilesIn(dir);
  ASSERT_FALSE(files.empty());
  for (const std::string& f : files) CheckModuleFile(f);
}

TEST(RealModulesTest, InstructionCountsMatchTheManifest) {
  // Counts from shared/hlo/real/MANIFEST.md ("instrs / comps / bytes").
  struct Expect {
    const char* file;
    int64_t instructions;
    size_t computations;
  };
  const Expect expects[] = {{"tests/data/hlo/pt_linear_fwd_bwd.hlo", 39, 2},
                            {"tests/data/hlo/pt_linear_model_zero1.hlo", 692, 26},
                            {"tests/data/hlo/xla_ssd_mobilenet_tf.hlo", 508, 1},
                            {"tests/data/hlo/xla_graphsage_tf.hlo", 138, 5},
                            {"tests/data/hlo/xla_gpu_collective_cse.hlo", 6, 1}};
  for (const Expect& e : expects) {
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModuleFile(e.file);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ((*m)->instruction_count(), e.instructions) << e.file;
    EXPECT_EQ((*m)->computations().size(), e.computations) << e.file;
  }
}

TEST(RealModulesTest, MissingFileIsNotFound) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModuleFile("tests/data/hlo/no_such_file.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpusim::hlo
