// The report's one description (driver/report_schema.h): docs/report-schema.md is its text,
// and a real `tpusim run` report has exactly the keys it lists, provenance included.
#include "driver/report_schema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "driver/provenance.h"
#include "driver/run_module.h"
#include "driver/run_report.h"
#include "hlo/parser.h"
#include "sim/report/report.h"

namespace tpusim::driver {
namespace {

TEST(ReportSchema, DocsReportSchemaMdIsTheGeneratedText) {
  std::ifstream in("docs/report-schema.md");
  ASSERT_TRUE(in) << "docs/report-schema.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), ReportSchemaMarkdown())
      << "docs/report-schema.md is stale: regenerate it with `tpusim report-schema > "
         "docs/report-schema.md`";
}

std::set<std::string> Keys(const Json& object) {
  std::set<std::string> keys;
  for (const auto& [k, v] : object.object()) keys.insert(k);
  return keys;
}

// A run of a bundled module with an override: every key the report has is documented and every
// documented key that is not optional is present; provenance records the override and the command.
TEST(ReportSchema, RunReportHasExactlyTheDocumentedKeys) {
  const std::string path = "tests/golden/tiny_dot_bias_relu/model.hlo";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto module = hlo::ParseHloModule(*text, path);
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto chip = config::LoadChipConfig("tiny", {"core.mxu.rows=16"});
  ASSERT_TRUE(chip.ok()) << chip.status().message();
  const char* argv[] = {"tpusim", "run", "model with space.hlo", "--set", "core.mxu.rows=16"};
  SetCommandLine(5, argv);
  auto r = RunModule(**module, *chip, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Json report = WithProvenance(RunReportJson(*r, path), *chip);

  std::set<std::string> documented, required;
  for (const auto* table : {&SimReportKeys(), &RunReportKeys()}) {
    for (const ReportKey& k : *table) {
      documented.insert(k.key);
      if (!k.optional) required.insert(k.key);
    }
  }
  for (const std::string& k : Keys(report))
    EXPECT_TRUE(documented.count(k)) << "undocumented: " << k;
  for (const std::string& k : required) EXPECT_TRUE(report.Find(k)) << "missing: " << k;
  EXPECT_EQ(report.object().front().first, "schema_version");
  EXPECT_EQ(report.object()[1].first, "provenance");

  const Json& prov = *report.Find("provenance");
  std::set<std::string> prov_documented, prov_required;
  for (const ReportKey& k : ProvenanceKeys()) {
    prov_documented.insert(k.key);
    if (!k.optional) prov_required.insert(k.key);
  }
  for (const std::string& k : Keys(prov)) EXPECT_TRUE(prov_documented.count(k)) << k;
  for (const std::string& k : prov_required) EXPECT_TRUE(prov.Find(k)) << "missing: " << k;
  const std::string dump = prov.Dump(0);
  EXPECT_NE(
      dump.find(R"("command_line":"tpusim run 'model with space.hlo' --set core.mxu.rows=16")"),
      std::string::npos)
      << dump.substr(0, 400);
  EXPECT_NE(dump.find(R"("overrides":[{"key":"core.mxu.rows","value":"16"}])"), std::string::npos);
  EXPECT_NE(dump.find(R"("rows":16)"), std::string::npos);
  EXPECT_NE(report.Dump(0).find("\"schema_version\":" + std::to_string(sim::kReportSchemaVersion)),
            std::string::npos);
}

TEST(Provenance, ShellQuoteReadsBackInAShell) {
  EXPECT_EQ(ShellQuote({"tpusim", "run", "a b.hlo", "it's", "", "--set", "x.y=1e9"}),
            "tpusim run 'a b.hlo' 'it'\\''s' '' --set x.y=1e9");
}

}  // namespace
}  // namespace tpusim::driver

namespace tpusim::driver {
namespace {

// An op is marked compiler-inserted exactly when the input module has no instruction of its name:
// SPMD partitioning of an unpartitioned module adds collectives; the module's own ops stay
// unmarked.
TEST(ReportOps, CompilerInsertedOpsAreTheOnesNotInTheInput) {
  const std::string path = "tests/data/hlo/spmd/megatron_mlp.hlo";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto module = hlo::ParseHloModule(*text, path);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::set<std::string> input;
  for (const auto& comp : (*module)->computations()) {
    for (const auto& inst : comp->instructions()) input.insert(inst->name());
  }
  auto chip = config::LoadChipConfig("tpu-v4-8");
  ASSERT_TRUE(chip.ok());
  RunOptions o;
  o.check = false;
  auto r = RunModule(**module, *chip, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Json report = RunReportJson(*r, path);
  int inserted = 0;
  for (const Json& op : report.Find("ops")->array()) {
    const std::string name = op.Find("name")->Dump(0);
    const std::string bare = name.substr(1, name.size() - 2);
    const bool marked = op.Find("compiler_inserted")->Dump(0) == "true";
    if (bare == "(untagged)") continue;
    EXPECT_EQ(marked, input.count(bare) == 0) << bare;
    inserted += marked ? 1 : 0;
  }
  EXPECT_GT(inserted, 0);
}

}  // namespace
}  // namespace tpusim::driver
