// The run report (driver/run_report.h): the JSON sections and the summary lines a RunModuleResult
// gives (one real run, edited by hand into each case), and the check's words
// beside the figures (issue 18 item 7): where the full-f32 comparison differs because of bf16 MXU
// passes, the note says so; elements that overflow on one side only are counted in words, not
// shown as an infinite "max abs error".
#include "driver/run_report.h"

#include <gtest/gtest.h>

#include <string>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "hlo/parser.h"

namespace tpusim::driver {
namespace {

CheckResult Performed() {
  CheckResult c;
  c.performed = true;
  c.passed = true;
  c.dot_layers = 23;
  c.elements_compared = 1000;
  return c;
}

TEST(CheckNoteTest, NoNoteWhenF32AgreesWithinTolerance) { EXPECT_EQ(F32Note(Performed()), ""); }

TEST(CheckNoteTest, Bf16RoundingThroughTheDotLayers) {
  CheckResult c = Performed();
  c.elements_outside_tolerance_vs_f32 = 12;
  c.max_rel_error_vs_f32 = 0.5;
  const std::string note = F32Note(c);
  EXPECT_NE(note.find("bf16 rounding"), std::string::npos) << note;
  EXPECT_NE(note.find("23 dot/convolution layer(s)"), std::string::npos) << note;
  EXPECT_EQ(note.find("near 0"), std::string::npos) << note;
  EXPECT_EQ(note.find("overflow"), std::string::npos) << note;
}

TEST(CheckNoteTest, OverflowOnOneSideIsCountedInWords) {
  CheckResult c = Performed();
  c.elements_outside_tolerance_vs_f32 = 40;
  c.elements_non_finite_vs_f32 = 7;
  c.max_rel_error_vs_f32 = 131;
  const std::string note = F32Note(c);
  EXPECT_NE(note.find("7 element(s) overflow to inf"), std::string::npos) << note;
  EXPECT_NE(note.find("not included in the max"), std::string::npos) << note;
  EXPECT_NE(note.find("max rel error 131 comes from elements whose f32 value is near 0"),
            std::string::npos)
      << note;
}


// The member at `path` ("check.reason") of `j`, serialized compactly; "<absent>" when missing.
std::string At(const Json& j, const std::string& path) {
  const Json* v = &j;
  size_t start = 0;
  while (v != nullptr && start <= path.size()) {
    const size_t dot = std::min(path.find('.', start), path.size());
    v = v->Find(path.substr(start, dot - start));
    start = dot + 1;
  }
  return v == nullptr ? "<absent>" : v->Dump(0);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A real timing-only run of a bundled module on the tiny chip, edited by the tests into the case
// each reports on: `replicas` as given, no check yet (tolerance 1e-4 + 1e-3 * |ref|).
RunModuleResult TinyRun(int64_t replicas) {
  const std::string path = "tests/golden/tiny_dot_bias_relu/model.hlo";
  auto text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().message();
  auto module = hlo::ParseHloModule(text.ok() ? *text : "", path);
  EXPECT_TRUE(module.ok()) << module.status().message();
  auto chip = config::LoadChipConfig("tiny", {});
  EXPECT_TRUE(chip.ok()) << chip.status().message();
  RunOptions options;
  options.timing_only = true;
  auto run = RunModule(**module, *chip, options);
  EXPECT_TRUE(run.ok()) << run.status().message();
  RunModuleResult r = std::move(run).value();
  r.replicas = replicas;
  r.timing_only = false;
  r.check = CheckResult{};
  r.check.atol = 1e-4;
  r.check.rtol = 1e-3;
  return r;
}

TEST(RunReportTest, TimingOnlyRunSaysWhyThereIsNoCheck) {
  RunModuleResult r = TinyRun(2);
  r.timing_only = true;
  size_t instructions = 0;
  for (const isa::CoreProgram& core : r.compiled.program.cores) {
    instructions += core.instructions.size();
  }
  r.check.reason = "--timing-only";
  const Json j = RunReportJson(r, "m.hlo");
  EXPECT_EQ(At(j, "model"), "\"m.hlo\"");
  EXPECT_EQ(At(j, "timing_only"), "true");
  EXPECT_EQ(At(j, "replicas"), "2");
  EXPECT_EQ(At(j, "compile.instructions"), std::to_string(instructions));  // every core's
  EXPECT_EQ(At(j, "check.performed"), "false");
  EXPECT_EQ(At(j, "check.passed"), "false");
  EXPECT_EQ(At(j, "check.reason"), "\"--timing-only\"");
  EXPECT_EQ(At(j, "check.vs_f32_note"), "<absent>");
  EXPECT_EQ(At(j, "if_converted_conditionals"), "<absent>");
  const std::string text = RunReportText(r, "m.hlo");
  EXPECT_TRUE(Has(text, "model             m.hlo (2 replica(s), timing-only)")) << text;
  EXPECT_TRUE(Has(text, "check             not performed: --timing-only")) << text;
}

TEST(RunReportTest, FailedCheckGivesItsFiguresReasonAndNote) {
  RunModuleResult r = TinyRun(1);
  CheckResult& c = r.check;
  c.performed = true;
  c.passed = false;
  c.reason = "3 element(s) outside tolerance; first: x";
  c.max_abs_error = 0.25;
  c.elements_compared = 64;
  c.elements_outside_tolerance_vs_f32 = 5;
  c.dot_layers = 2;
  const Json j = RunReportJson(r, "m.hlo");
  EXPECT_EQ(At(j, "check.performed"), "true");
  EXPECT_EQ(At(j, "check.passed"), "false");
  EXPECT_EQ(At(j, "check.max_abs_error"), "0.25");
  EXPECT_EQ(At(j, "check.elements_compared"), "64");
  EXPECT_EQ(At(j, "check.tolerance.atol"), "0.0001");
  EXPECT_EQ(At(j, "check.vs_f32_note"), Json(F32Note(c)).Dump(0));
  const std::string text = RunReportText(r, "m.hlo");
  EXPECT_TRUE(Has(text, "check             FAILED: 64 elements")) << text;
  EXPECT_TRUE(Has(text, "(tolerance 0.0001 + 0.001*|ref|)")) << text;
  EXPECT_TRUE(Has(text, "                  " + c.reason + "\n")) << text;
  EXPECT_TRUE(Has(text, "2 dot/convolution layer(s)")) << text;
}

TEST(RunReportTest, APartitionedCheckSaysWhatDecidedIt) {
  RunModuleResult r = TinyRun(1);
  CheckResult& c = r.check;
  c.performed = true;
  c.passed = true;
  c.elements_compared = 64;
  c.unpartitioned_mismatches = 7;
  c.partition_note = "the simulated values equal the partitioned program's on the evaluator";
  const Json j = RunReportJson(r, "m.hlo");
  EXPECT_EQ(At(j, "check.passed"), "true");
  EXPECT_EQ(At(j, "check.unpartitioned_mismatches"), "7");
  EXPECT_EQ(At(j, "check.partition_note"), Json(c.partition_note).Dump(0));
  const std::string text = RunReportText(r, "m.hlo");
  EXPECT_TRUE(Has(text, "check             PASSED: 64 elements")) << text;
  EXPECT_TRUE(Has(text, "vs the unpartitioned module: 7 element(s) beyond the tolerance; " +
                            c.partition_note + "\n"))
      << text;
  // Without a partition check, neither field appears.
  c.partition_note.clear();
  EXPECT_FALSE(Has(RunReportJson(r, "m.hlo").Dump(0), "partition_note"));
}

TEST(RunReportTest, CompilerDecisionsAreListedAndExplained) {
  RunModuleResult r = TinyRun(4);
  r.partitions = 2;
  r.compiled.cores_per_device = 2;
  r.compiled.if_converted_conditionals = {"cond.1", "cond.2"};
  r.compiled.branch_loops = {"while.7=12"};
  r.compiled.given_trip_counts = {"while.9=5"};
  const Json j = RunReportJson(r, "m.hlo");
  EXPECT_EQ(At(j, "partitions"), "2");
  EXPECT_EQ(At(j, "cores_per_device"), "2");
  EXPECT_EQ(At(j, "if_converted_conditionals"), "[\"cond.1\",\"cond.2\"]");
  EXPECT_EQ(At(j, "trip_counts_counted"), "[\"while.7=12\"]");
  EXPECT_EQ(At(j, "trip_counts_given"), "[\"while.9=5\"]");
  const std::string text = RunReportText(r, "m.hlo");
  EXPECT_TRUE(Has(text, "(4 devices: 2 replica(s) x 2 partitions)")) << text;
  EXPECT_TRUE(Has(text, "2 conditional(s) (%cond.1, ...) run every branch")) << text;
  EXPECT_TRUE(Has(text, "while %while.7=12 trips: counted by the CPU evaluator")) << text;
  EXPECT_TRUE(Has(text, "while %while.9=5 trips: given by --trip-count")) << text;
  EXPECT_TRUE(Has(text, "megacore          each device runs on 2 TensorCores")) << text;
}

}  // namespace
}  // namespace tpusim::driver
