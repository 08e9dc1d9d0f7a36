// The one description of the JSON report (`tpusim run --report` / `--json`, `tpusim exec --report`):
// every top-level key, its type and meaning, and the prose around them. docs/report-schema.md is
// this text (`tpusim report-schema > docs/report-schema.md`); a test compares the two and checks
// that a real report has exactly the keys listed here.
#pragma once

#include <string>
#include <vector>

namespace tpusim::driver {

struct ReportKey {
  std::string key;      // top-level key, or "provenance.<key>" for a provenance member
  std::string type;     // "int", "double", "string", "object", "array", ...
  std::string meaning;  // Markdown
  bool optional = false;  // present only in some runs (the meaning says when)
};

/// Keys of every simulation report, in report order: sim::BuildReportJson's, with `provenance`
/// (inserted by the commands, provenance.h) second.
const std::vector<ReportKey>& SimReportKeys();
/// Keys `tpusim run` adds (driver/run_report.cc, scaling.cc), in report order.
const std::vector<ReportKey>& RunReportKeys();
/// Members of `provenance` (driver/provenance.h), in report order.
const std::vector<ReportKey>& ProvenanceKeys();

/// The whole of docs/report-schema.md.
std::string ReportSchemaMarkdown();

}  // namespace tpusim::driver
