// The schema table (config/schema.h): every key documented and generated into docs/config.md, the
// ChipConfig struct's initializers equal to the table's defaults, ranges checked from the table
// alone, and the effective config of a run reproducing it.
#include "config/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_loader.h"

namespace tpusim::config {
namespace {

using ::testing::HasSubstr;

TEST(ConfigSchema, EveryKeyHasUnitOrTypeAndDescription) {
  for (const FieldSpec& f : ConfigSchema()) {
    EXPECT_FALSE(f.description.empty()) << f.path;
    if (f.type == FieldType::kInt || f.type == FieldType::kDouble) {
      EXPECT_FALSE(f.unit.empty()) << f.path << " has no unit";
    }
  }
}

TEST(ConfigSchema, DocsConfigMdMatchesTheSchemaTable) {
  std::ifstream in("docs/config.md");
  ASSERT_TRUE(in) << "docs/config.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  // The file ends with the generated table; regenerate with `tpusim config schema --markdown`.
  EXPECT_NE(ss.str().find(SchemaMarkdown()), std::string::npos)
      << "docs/config.md is stale: regenerate its table with `tpusim config schema --markdown`";
}

// Key `f`'s value in `c`, as text (for comparing two configs key by key).
std::string ValueText(const FieldSpec& f, ChipConfig& c) {
  switch (f.type) {
    case FieldType::kInt:
      return fmt::format("{}", f.int_field(c));
    case FieldType::kDouble:
      return fmt::format("{}", f.double_field(c));
    case FieldType::kBool:
      return f.bool_field(c) ? "true" : "false";
    case FieldType::kString:
      return f.string_field(c);
    case FieldType::kTopology:
      return TopologyName(f.topology_field(c));
    case FieldType::kIntList:
      return fmt::format("{}", fmt::join(f.int_list_field(c), ","));
  }
  return "?";
}

// A config built in code (sim/ and compiler tests, ChipConfig{} in any caller) starts from the
// same values as a YAML file that leaves the key out: the struct's initializer of every key with a
// default is the schema's default.
TEST(ConfigSchema, EveryDefaultIsTheStructsDefault) {
  // Only the required keys, each at the low end of its range (the loader fills in the rest).
  std::vector<std::string> required;
  for (const FieldSpec& f : ConfigSchema()) {
    if (!f.required()) continue;
    if (f.type == FieldType::kString) {
      required.push_back(f.path + "=x");
    } else {
      ASSERT_TRUE(f.has_range) << f.path;
      required.push_back(fmt::format("{}={:.17g}", f.path, f.min));
    }
  }
  auto loaded = LoadChipConfigFromString("{}", "required-only.yaml", required);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ChipConfig from_yaml = *loaded;
  ChipConfig in_code;
  int compared = 0;
  for (const FieldSpec& f : ConfigSchema()) {
    if (f.required()) continue;
    EXPECT_EQ(ValueText(f, in_code), ValueText(f, from_yaml))
        << f.path << ": the ChipConfig initializer differs from the schema default "
        << f.default_value;
    ++compared;
  }
  EXPECT_GE(compared, 30);
}

TEST(ConfigSchema, FindConfigFieldFindsEveryKeyAndNothingElse) {
  for (const FieldSpec& f : ConfigSchema()) EXPECT_EQ(FindConfigField(f.path), &f);
  EXPECT_EQ(FindConfigField("core.mxu"), nullptr);
  EXPECT_EQ(FindConfigField("core.mxu.rows.x"), nullptr);
}

// A value that did not come through the loader is checked against the same range, and the message
// names the key path and says what was expected as the loader's does.
TEST(ConfigSchema, CheckConfigRangeUsesTheSchemasRange) {
  EXPECT_TRUE(CheckConfigRange("core.mxu.rows", int64_t{128}).ok());
  EXPECT_TRUE(CheckConfigRange("core.mxu.rows", int64_t{4096}).ok());
  const Status too_many = CheckConfigRange("core.mxu.rows", int64_t{4097});
  EXPECT_EQ(too_many.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(too_many.message(), "core.mxu.rows: expected a positive integer at most 4096, got 4097");
  const Status slow = CheckConfigRange("chip.clock_hz", 5.0);
  EXPECT_THAT(slow.message(), HasSubstr("chip.clock_hz: expected a positive number from 1000000"));
  EXPECT_THAT(slow.message(), HasSubstr("got 5"));
  // The loader refuses the same value with the same words.
  auto loaded = LoadChipConfig("configs/tpu-v4.yaml", {"core.mxu.rows=4097"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr(std::string(too_many.message())));
}

// The effective config holds every schema key, and read back as YAML (JSON is YAML) it is the same
// chip: what a report's provenance records reproduces the run's config.
TEST(EffectiveConfig, HasEveryKeyAndRoundTrips) {
  for (const char* name : {"configs/tpu-v4.yaml", "configs/tpu-v2-8.yaml", "configs/tiny.yaml"}) {
    auto c = LoadChipConfig(name, {"core.mxu.rows=64", "chip.hbm.bandwidth_bytes_per_s=8e11"});
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    const Json j = EffectiveConfigJson(*c);
    for (const FieldSpec& f : ConfigSchema()) {
      const Json* node = &j;
      std::string_view path = f.path;
      for (size_t dot = path.find('.'); node && dot != std::string_view::npos;
           dot = path.find('.')) {
        node = node->Find(path.substr(0, dot));
        path.remove_prefix(dot + 1);
      }
      EXPECT_TRUE(node && node->Find(path)) << name << ": " << f.path;
    }
    auto back = LoadChipConfigFromString(j.Dump(), "effective.yaml");
    ASSERT_TRUE(back.ok()) << name << ": " << back.status().message();
    EXPECT_EQ(EffectiveConfigJson(*back).Dump(), j.Dump()) << name;
    EXPECT_EQ(back->core.mxu.rows, 64);
  }
}

}  // namespace
}  // namespace tpusim::config
