// Loading, merging and validating chip configs: every shipped config loads, and each class of bad
// config gives a message naming the file, the key path and what was expected.
#include "config/config_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/schema.h"

namespace tpusim::config {
namespace {

using ::testing::HasSubstr;

TEST(ConfigLoader, EveryShippedConfigLoadsAndValidates) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("configs")) {
    if (entry.path().extension() != ".yaml") continue;
    auto c = LoadChipConfig(entry.path().string());
    ASSERT_TRUE(c.ok()) << entry.path() << ": " << c.status().message();
    EXPECT_EQ(c->name + ".yaml", entry.path().filename().string());
    ++count;
  }
  EXPECT_GE(count, 12);  // v1 v2 v3 v4 v5e v5p v6e, v2-8 v3-8 v4-8, tiny, tiny-4
}

TEST(ConfigLoader, BareNameResolvesInConfigsFolder) {
  auto c = LoadChipConfig("tpu-v5e");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->core.mxu.count, 4);
  EXPECT_EQ(c->source_path, "configs/tpu-v5e.yaml");
}

TEST(ConfigLoader, BaseIsMergedAndChildOverrides) {
  auto c = LoadChipConfig("configs/tpu-v2-8.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "tpu-v2-8");
  EXPECT_EQ(c->system.chips, 4);
  EXPECT_EQ(c->system.topology, Topology::kTorus2D);
  EXPECT_EQ(c->total_cores(), 8);        // Colab's "8 TPU cores"
  EXPECT_EQ(c->core.mxu.rows, 128);      // inherited from tpu-v2
  EXPECT_FALSE(c->hbm.shared_by_cores);  // inherited: v2 splits HBM per core
}

TEST(ConfigLoader, SetOverridesAnyKey) {
  auto c = LoadChipConfig("tpu-v4", {"core.mxu.rows=256", "system.ici.hop_latency_cycles=7"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->core.mxu.rows, 256);
  EXPECT_EQ(c->system.ici_hop_latency_cycles, 7);
}

TEST(ConfigLoader, DefaultsFillOptionalKeys) {
  const std::string yaml = R"(
name: minimal
chip: {tensorcores: 1, clock_hz: 1e9, hbm: {capacity_bytes: 1024, bandwidth_bytes_per_s: 1e9}}
core:
  mxu: {count: 1, rows: 4, cols: 4, accumulator_rows: 16}
  vmem: {capacity_bytes: 4096, bytes_per_cycle: 64}
)";
  auto c = LoadChipConfigFromString(yaml, "minimal.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->core.vpu.lanes, 128);
  EXPECT_EQ(c->core.vpu.alu_latency_cycles, 2);
  EXPECT_EQ(c->core.mxu.weight_buffers, 2);
  EXPECT_EQ(c->system.topology, Topology::kSingle);
}

struct BadCase {
  const char* label;
  std::vector<std::string> overrides;
  const char* expected;  // substring of the error message
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, IsRejectedWithKeyPath) {
  const BadCase& bc = GetParam();
  auto c = LoadChipConfig("configs/tpu-v4.yaml", bc.overrides);
  ASSERT_FALSE(c.ok()) << bc.label;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr(bc.expected)) << bc.label;
}

INSTANTIATE_TEST_SUITE_P(
    Classes, BadConfig,
    ::testing::Values(
        BadCase{"wrong type",
                {"core.mxu.rows=abc"},
                "--set core.mxu.rows=abc: core.mxu.rows: expected an integer, got \"abc\""},
        BadCase{"negative",
                {"core.mxu.rows=-4"},
                "--set core.mxu.rows=-4: core.mxu.rows: expected a positive integer at most 4096, "
                "got -4"},
        BadCase{"absurd", {"core.mxu.count=100000"}, "core.mxu.count: expected a positive integer"},
        BadCase{"zero clock", {"chip.clock_hz=0"}, "chip.clock_hz: expected a positive number"},
        BadCase{"bad bool",
                {"chip.hbm.shared_by_cores=maybe"},
                "chip.hbm.shared_by_cores: expected true or false, got \"maybe\""},
        BadCase{"bad enum",
                {"system.topology=mesh"},
                "system.topology: expected one of single, ring, torus2d, torus3d"},
        BadCase{"unknown key", {"core.mxu.rowz=4"}, "--set core.mxu.rowz=4: core.mxu.rowz: unknown key"},
        BadCase{"list for scalar",
                {"core.mxu.rows=[1,2]"},
                "core.mxu.rows: expected a single value, got a list"},
        BadCase{"inconsistent shape",
                {"system.chips=4", "system.topology=torus2d", "system.shape=[2,3]",
                 "system.ici.links_per_chip=4"},
                "--set system.shape=[2,3]: system.shape: product of the dimensions is 6 but "
                "system.chips is 4"},
        BadCase{"chips without topology",
                {"system.chips=4"},
                // The message names where the chip count came from, not only the file whose
                // topology it contradicts.
                "configs/tpu-v4.yaml: system.topology: system.chips is 4 (--set system.chips=4), "
                "so the chips need a topology"},
        BadCase{"weight buffers",
                {"core.mxu.weight_buffers=3"},
                "core.mxu.weight_buffers: expected a positive integer at most 2, got 3"},
        BadCase{"no set syntax", {"core.mxu.rows"}, "expected key.path=value"}),
    [](const auto& info) {
      std::string n = info.param.label;
      for (char& ch : n) {
        if (ch == ' ') ch = '_';
      }
      return n;
    });

TEST(ConfigLoader, UnknownKeyInFileNamesFileAndPath) {
  auto c =
      LoadChipConfigFromString("base: tpu-v4\ncore:\n  mxu:\n    colls: 3\n", "configs/x.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "configs/x.yaml: core.mxu.colls: unknown key (see `tpusim config schema`)");
}

TEST(ConfigLoader, MissingRequiredKey) {
  auto c = LoadChipConfigFromString("name: x\nchip:\n  tensorcores: 1\n", "configs/x.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "configs/x.yaml: chip.clock_hz: missing required key");
}

TEST(ConfigLoader, MalformedYamlGivesLineAndColumn) {
  auto c = LoadChipConfigFromString("name: x\nchip: {tensorcores: 1\n", "configs/bad.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("configs/bad.yaml:"));
  EXPECT_THAT(c.status().message(), HasSubstr(": error: "));
}

TEST(ConfigLoader, MissingFileIsNotFound) {
  auto c = LoadChipConfig("configs/does-not-exist.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("does-not-exist.yaml: no such file"));
}

TEST(ConfigLoader, BaseCycleIsAnError) {
  const auto dir = std::filesystem::temp_directory_path() / "tpusim_cfg_cycle";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "a.yaml") << "base: b.yaml\n";
    std::ofstream(dir / "b.yaml") << "base: a.yaml\n";
  }
  auto c = LoadChipConfig((dir / "a.yaml").string());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("base"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tpusim::config

namespace tpusim::config {
namespace {

// A key validated after conversion (range, consistency) is blamed on the --set that gave its value,
// and on the file when the file gave it, whatever else was overridden.
TEST(ConfigLoader, ValidationErrorNamesTheSetThatGaveTheValue) {
  auto from_set = LoadChipConfig("configs/tpu-v4.yaml", {"core.mxu.rows=0"});
  ASSERT_FALSE(from_set.ok());
  EXPECT_THAT(from_set.status().message(),
              ::testing::StartsWith("--set core.mxu.rows=0: core.mxu.rows: expected a positive"));
  auto from_file = LoadChipConfig("tests/data/configs/bad-negative.yaml", {"core.mxu.cols=128"});
  ASSERT_FALSE(from_file.ok());
  EXPECT_THAT(from_file.status().message(), HasSubstr("bad-negative.yaml: core.mxu.rows:"));
  EXPECT_THAT(from_file.status().message(), ::testing::Not(HasSubstr("--set")));
}

TEST(ConfigLoader, RecordsOverridesInOrder) {
  auto c = LoadChipConfig("configs/tpu-v4.yaml", {"core.mxu.rows=256", "chip.clock_hz=1e9"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->overrides, (std::vector<std::string>{"core.mxu.rows=256", "chip.clock_hz=1e9"}));
}

}  // namespace
}  // namespace tpusim::config
