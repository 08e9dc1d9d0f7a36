// Loading a file (hlo/load.h): the split-input-file form of XLA's tests, several modules separated
// by `// -----` lines, loads its first module at its own lines, with a note naming the count.
#include "hlo/load.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace tpusim::hlo {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

constexpr char kTwoModules[] = R"(// RUN: hlo-opt %s --split-input-file | FileCheck %s
// CHECK: negate

HloModule first

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

// -----

HloModule second

ENTRY e {
  p = s32[2] parameter(0)
  ROOT n = s32[2] abs(p)
}
)";

TEST(LoadTest, SplitInputFileRunsTheFirstModuleAndSaysSo) {
  const std::string path = WriteTemp("split_two.hlo", kTwoModules);
  StatusOr<LoadedHloModule> loaded = LoadHloModule(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->module->name(), "first");
  EXPECT_EQ(loaded->module->entry_computation()->root_instruction()->name(), "n");
  ASSERT_EQ(loaded->notes.size(), 1u);
  EXPECT_NE(loaded->notes[0].find("holds 2 modules separated by `// -----` lines"),
            std::string::npos)
      << loaded->notes[0];
  EXPECT_NE(loaded->notes[0].find("lines 1-10"), std::string::npos) << loaded->notes[0];
}

TEST(LoadTest, SplitInputFileErrorsKeepTheFilesLineNumbers) {
  // The first module is preceded by a comment-only chunk (left out) and has an error on line 7.
  const std::string path = WriteTemp("split_bad.hlo", R"(// just comments
// -----
HloModule a
ENTRY e {
  p = f32[4] parameter(0)
  // the next line uses an undefined operand
  ROOT n = f32[4] negate(q)
}
// -----
HloModule b
ENTRY e {
  ROOT c = f32[] constant(1)
}
)");
  StatusOr<LoadedHloModule> loaded = LoadHloModule(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("split_bad.hlo:7:"), std::string::npos)
      << loaded.status().message();
}

TEST(LoadTest, SplitInputFileChunks) {
  EXPECT_EQ(SplitInputFile("HloModule m\nENTRY e {\n ROOT c = f32[] constant(1)\n}\n").size(), 1u);
  const std::vector<SplitChunk> chunks = SplitInputFile(kTwoModules);
  ASSERT_EQ(chunks.size(), 2u);
  const std::string_view text = kTwoModules;
  EXPECT_EQ(text.substr(chunks[1].begin, 18), "\nHloModule second\n");
  EXPECT_EQ(chunks[0].begin, 0u);
  // A `// -----` inside a longer comment is no separator.
  EXPECT_EQ(SplitInputFile("HloModule m\n// ----- not a marker\nENTRY e {\n}\n").size(), 1u);
}

TEST(LoadTest, OneModuleFileHasNoNote) {
  const std::string path =
      WriteTemp("one.hlo", "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n");
  StatusOr<LoadedHloModule> loaded = LoadHloModule(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->notes.empty());
}

}  // namespace
}  // namespace tpusim::hlo
