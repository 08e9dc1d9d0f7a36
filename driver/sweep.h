// `tpusim sweep`: a design-space sweep over config keys. Each point of the grid is an independent
// `tpusim run` process with its --set overrides; the points run under GNU parallel (one per line of
// a jobs file, the engine's conventions: `parallel --jobs N < jobs.txt`), or under any engine that
// runs the lines of that file (a Slurm job array, `parallel --sshlogin`: scripts/sweep_*.sh), and
// their reports are collected into one CSV, one row per point.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tpusim::driver {

/// One --grid KEY=V1,V2,...: a config key and its values (commas inside [...] belong to a value,
/// so `system.shape=[2,2],[4,1]` has two values).
struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

/// Parses "KEY=V1,V2,..."; InvalidArgument naming `--grid TEXT` if KEY or a value is empty.
StatusOr<GridAxis> ParseGridAxis(const std::string& text);

/// The points of the grid, the first axis varying slowest: per point its overrides "KEY=VALUE" in
/// axis order.
std::vector<std::vector<std::string>> GridPoints(const std::vector<GridAxis>& axes);

/// The columns of the sweep CSV after the grid keys (the key results of each point's report).
const std::vector<std::string>& SweepResultColumns();

/// One CSV row: `point` (1-based), the point's value of each axis, the run's exit code (empty when
/// unknown), then SweepResultColumns() read from `report_path` (empty cells when there is no
/// report: a failed point), then `report_path`. InvalidArgument if the report exists but is not a
/// tpusim report.
StatusOr<std::string> SweepCsvRow(int point, const std::vector<std::string>& overrides,
                                  const std::string& exit_code, const std::string& report_path);

/// "point,KEY1,KEY2,...,exit_code,<results>,report\n".
std::string SweepCsvHeader(const std::vector<GridAxis>& axes);

/// Where point `index` (0-based) keeps its `ext` file ("json": its report, "err": its stderr,
/// "rc": its exit code): DIR/point_NNNN.EXT, numbered from 1 in four digits.
std::string SweepPointPath(const std::string& dir, size_t index, const char* ext);

/// What every point of a sweep runs.
struct SweepJob {
  std::string tpusim;                  // the binary each line runs
  std::string model;                   // the HLO file (made absolute in the jobs file)
  std::string config;                  // a config name, or a YAML path (made absolute if it exists)
  std::vector<std::string> overrides;  // --set KEY=VALUE before the grid's
  std::vector<std::string> run_args;   // further `tpusim run` options, after the report
  std::string dir;                     // the work folder of the points' files (SweepPointPath)
};

/// The jobs file: one shell line per point, `TPUSIM -q --progress never run MODEL --config C --set
/// <overrides> --set <point> --report DIR/point_N.json <run_args> >/dev/null 2>DIR/point_N.err;
/// echo $? >DIR/point_N.rc`, every word shell-quoted.
std::string SweepJobsText(const SweepJob& job, const std::vector<std::vector<std::string>>& points);

/// Ok when the config of every point loads (config::LoadChipConfig(config, overrides + point)), so
/// a bad grid value is reported before anything runs; else the first error prefixed "--grid, point
/// N" (1-based).
Status CheckSweepPoints(const std::string& config, const std::vector<std::string>& overrides,
                        const std::vector<std::vector<std::string>>& points);

}  // namespace tpusim::driver
