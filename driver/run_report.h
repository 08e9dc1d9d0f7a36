// The report of a `tpusim run` (driver/run_module.h RunModule's result): the JSON report
// (docs/report-schema.md: the simulator's sections, sim/report/report.h, plus what the run
// adds) and the readable summary printed on stdout, with the words beside the value check's
// figures.
#pragma once

#include <string>

#include "common/json.h"
#include "driver/run_module.h"

namespace tpusim::driver {

/// The report: the simulator's JSON (docs/report-schema.md) plus `model`, `replicas`, `slice`,
/// `timing_only`, `compile` {hbm_bytes_used, peak_vmem_bytes, passes} and `check` {performed,
/// passed, max_abs_error, max_rel_error, tolerance, ...}.
Json RunReportJson(const RunModuleResult& r, const std::string& model_path);

/// Empty when the run matches full f32 within the tolerance; else the words that say where the
/// difference comes from (bf16 MXU passes, amplified through the module's dot layers; relative
/// errors at near-zero values), printed beside the figures and in the report's `check`.
std::string F32Note(const CheckResult& c);

/// The readable summary printed on stdout.
std::string RunReportText(const RunModuleResult& r, const std::string& model_path);

}  // namespace tpusim::driver
