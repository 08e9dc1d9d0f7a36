// `tpusim report-schema`: prints docs/report-schema.md, the description of the JSON report
// (driver/report_schema.h); regenerate the doc with `tpusim report-schema >
// docs/report-schema.md`.
#include <iostream>

#include "driver/report_schema.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterReportSchemaCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "report-schema", "print the JSON report's schema as Markdown (docs/report-schema.md)");
  cmd->callback([] { std::cout << driver::ReportSchemaMarkdown(); });
}

}  // namespace tpusim::cli
