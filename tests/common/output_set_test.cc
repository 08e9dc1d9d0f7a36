// common/output_set.h: every output of a run is declared first (bad paths refused at once),
// written together at Commit() or not at all; regular files are replaced by a rename of a
// temporary beside them (a symlink stays a symlink), devices are written through, and a failed
// write names the option, the path and the reason.
#include "common/output_set.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/common/temp_dir.h"

namespace tpusim {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The names in `dir`, to see that no temporary or spool file is left behind.
int Entries(const TempDir& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++n;
  return n;
}

TEST(OutputSetTest, NothingIsWrittenBeforeCommitAndEverythingAtIt) {
  TempDir dir;
  Write(dir / "old.json", "old");
  OutputSet out;
  ASSERT_TRUE(out.Declare("--report", dir / "old.json").ok());
  ASSERT_TRUE(out.Declare("--csv", dir / "new.csv").ok());
  ASSERT_TRUE(out.Declare("--trace", dir / "never_set.json").ok());
  EXPECT_TRUE(out.Has("--csv"));
  EXPECT_FALSE(out.Has("-o"));
  out.Set("--report", "first");
  out.Set("--report", "{\"cycles\": 7}");  // replaces the earlier contents
  out.Set("--csv", "a,b\n1,2\n");
  EXPECT_EQ(Slurp(dir / "old.json"), "old");
  EXPECT_FALSE(fs::exists(dir / "new.csv"));
  ASSERT_TRUE(out.Commit().ok());
  EXPECT_EQ(Slurp(dir / "old.json"), "{\"cycles\": 7}");
  EXPECT_EQ(Slurp(dir / "new.csv"), "a,b\n1,2\n");
  EXPECT_TRUE(fs::exists(dir / "never_set.json"));  // declared but never Set: written empty
  EXPECT_EQ(Slurp(dir / "never_set.json"), "");
  EXPECT_EQ(Entries(dir), 3);  // no temporary left
  // Once a set has committed, a watchdog lets the process finish instead of ending it.
  EXPECT_FALSE(ExitUnlessCommitted(2, "stopped\n"));
}

TEST(OutputSetTest, ASymlinkStaysASymlinkAndItsTargetGetsTheContents) {
  TempDir dir;
  Write(dir / "target", "old");
  fs::create_symlink(dir / "target", dir / "link");
  fs::create_symlink(dir / "missing", dir / "dangling");  // created, as a shell redirection does
  OutputSet out;
  ASSERT_TRUE(out.Declare("-o", dir / "link").ok());
  ASSERT_TRUE(out.Declare("--report", dir / "dangling").ok());
  out.Set("-o", "new");
  out.Set("--report", "r");
  ASSERT_TRUE(out.Commit().ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(Slurp(dir / "target"), "new");
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
  EXPECT_EQ(Slurp(dir / "missing"), "r");
}

TEST(OutputSetTest, AReplacedFileKeepsItsMode) {
  TempDir dir;
  Write(dir / "f", "old");
  ASSERT_EQ(::chmod((dir / "f").c_str(), 0640), 0);
  OutputSet out;
  ASSERT_TRUE(out.Declare("-o", dir / "f").ok());
  out.Set("-o", "new");
  ASSERT_TRUE(out.Commit().ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(Slurp(dir / "f"), "new");
}

TEST(OutputSetTest, BadPathsAreRefusedAtDeclareNamingOptionAndPath) {
  TempDir dir;
  OutputSet out;
  Status st = out.Declare("--report", "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "--report: empty output path");
  st = out.Declare("--report", dir.path().string());
  EXPECT_EQ(st.message(), "--report " + dir.path().string() + ": is a directory");
  st = out.Declare("--csv", dir / "no/such/folder/x.csv");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("--csv " + (dir / "no/such/folder/x.csv") +
                                   ": cannot write: no folder ",
                               0),
            0u)
      << st.message();
  fs::create_symlink(dir / "loop_a", dir / "loop_b");
  fs::create_symlink(dir / "loop_b", dir / "loop_a");
  st = out.Declare("-o", dir / "loop_a");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = out.Declare("-o", "/dev/fd/987");
  EXPECT_EQ(st.message(), "-o /dev/fd/987: descriptor 987 is not open");
  EXPECT_FALSE(out.Has("--report"));  // a refused declaration is not kept
}

TEST(OutputSetTest, TwoOutputsNamingOneFileAreRefused) {
  TempDir dir;
  Write(dir / "f", "");
  fs::create_symlink(dir / "f", dir / "link");
  fs::create_hard_link(dir / "f", dir / "hard");
  {
    OutputSet out;
    ASSERT_TRUE(out.Declare("--report", dir / "f").ok());
    for (const std::string& other : {dir / "f", dir / "link", dir / "hard"}) {
      const Status st = out.Declare("--csv", other);
      EXPECT_EQ(st.message(), "--csv " + other + ": the same file as --report " + (dir / "f") +
                                  "; give each output its own path");
    }
  }
  {
    // Two new paths that end at one target: through a dangling symlink, or a path with "..".
    OutputSet out;
    ASSERT_TRUE(out.Declare("--report", dir / "new").ok());
    fs::create_symlink(dir / "new", dir / "to_new");
    EXPECT_FALSE(out.Declare("--csv", dir / "to_new").ok());
    fs::create_directory(dir / "sub");
    EXPECT_FALSE(out.Declare("--csv", dir / "sub/../new").ok());
  }
  {
    // Standard output twice, by two of its names.
    OutputSet out;
    ASSERT_TRUE(out.Declare("--report", "-").ok());
    EXPECT_FALSE(out.Declare("--csv", "/dev/stdout").ok());
  }
}

TEST(OutputSetTest, DevicesAreWrittenThroughAndMayTakeSeveralOutputs) {
  OutputSet out;
  ASSERT_TRUE(out.Declare("--report", "/dev/null").ok());
  ASSERT_TRUE(out.Declare("--csv", "/dev/null").ok());
  out.Set("--report", "r");
  ASSERT_TRUE(out.Commit().ok());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));  // never replaced by a rename
}

TEST(OutputSetTest, AFailedWriteNamesTheOptionAndRenamesNothing) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir dir;
  Write(dir / "old.csv", "old");
  OutputSet out;
  ASSERT_TRUE(out.Declare("--csv", dir / "old.csv").ok());
  ASSERT_TRUE(out.Declare("--report", "/dev/full").ok());
  out.Set("--csv", "new");
  out.Set("--report", "r");
  const Status st = out.Commit();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "--report /dev/full: write failed: No space left on device");
  EXPECT_EQ(Slurp(dir / "old.csv"), "old");  // the file output was not renamed
  EXPECT_EQ(Entries(dir), 1);                // and its temporary is gone
}

TEST(OutputSetTest, AStreamedOutputBecomesTheFileAndLeavesNoSpool) {
  TempDir dir;
  OutputSet out;
  ASSERT_TRUE(out.Declare("--trace", dir / "trace.json").ok());
  auto stream = out.Stream("--trace");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  std::string want;
  for (int i = 0; i < 2500000; ++i) want += static_cast<char>('0' + i % 7);  // 1 MiB chunks x 2.4
  **stream << want;
  EXPECT_EQ(Entries(dir), 0);  // the spool is unlinked at once
  ASSERT_TRUE(out.Commit().ok());
  EXPECT_EQ(Slurp(dir / "trace.json"), want);
  EXPECT_EQ(Entries(dir), 1);
  // Stream() of an undeclared output is a bug in the caller.
  EXPECT_EQ(out.Stream("--nope").status().code(), StatusCode::kInternal);
}

TEST(OutputSetTest, WriteFileAtomicIsOneOutputSet) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "a.tasm", "nop\n").ok());
  EXPECT_EQ(Slurp(dir / "a.tasm"), "nop\n");
  const Status st = WriteFileAtomic(dir.path().string(), "x");
  EXPECT_EQ(st.message(), "output " + dir.path().string() + ": is a directory");
}

TEST(OutputSetTest, FlushStandardOutputReportsAFailedWrite) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  EXPECT_TRUE(FlushStandardOutput().ok());
  std::fflush(stdout);
  const int saved = ::dup(1);
  ASSERT_GE(saved, 0);
  const int full = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  ASSERT_EQ(::dup2(full, 1), 1);
  std::printf("lost\n");
  const Status st = FlushStandardOutput();
  ::dup2(saved, 1);  // restore standard output before anything else is printed
  ::close(saved);
  ::close(full);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "standard output: write failed: No space left on device");
  EXPECT_TRUE(FlushStandardOutput().ok());  // the error was cleared
}

}  // namespace
}  // namespace tpusim
