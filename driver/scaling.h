// Scaling study behind `tpusim run MODEL.hlo --scaling 1,2,4,8`: the same module run on several
// core counts (replicas), one row per count.
//
// Data-parallel modules carry per-replica shapes (each replica processes its own batch), so adding
// cores adds work: this is WEAK scaling. The figures are
//   throughput(n) = n / seconds(n)                 (module instances per second)
//   speedup(n)    = throughput(n) / throughput(n0) = (n / n0) * cycles(n0) / cycles(n)
//   efficiency(n) = speedup(n) / (n / n0)          = cycles(n0) / cycles(n)
// where n0 is the first count of the list; an ideal machine (free collectives) keeps efficiency 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "driver/host_loop.h"
#include "driver/run_module.h"
#include "hlo/module.h"

namespace tpusim::driver {

struct ScalingRow {
  int64_t cores = 0;
  uint64_t cycles = 0;             // the run's length (core clock cycles)
  double seconds = 0;              // cycles / clock
  double speedup = 0;              // throughput vs the first row (see the file comment)
  double efficiency = 0;           // speedup / (cores / first cores)
  uint64_t collective_cycles = 0;  // largest ici_bound stall time of any core (cycles)
  bool check_performed = false;
  bool check_passed = false;
  // With the host loop (--steps / --host-input): the pipelined step with the host's share.
  bool host_loop = false;
  double step_seconds = 0;         // HostLoop::wall_seconds
  double examples_per_second = 0;  // HostLoop::examples_per_second
  double step_speedup = 0;         // examples_per_second / the first row's
  std::string bound;               // HostLoop::bound
};

/// Parses "1,2,4,8": positive, strictly increasing core counts. InvalidArgument otherwise.
StatusOr<std::vector<int64_t>> ParseCoreCounts(std::string_view list);

/// Makes `module` (as parsed from `source`, `file` names it for diagnostics) run on `cores`
/// replicas: sets replica_count and rewrites a collective whose only replica group lists every
/// device of the module ({{0,...,N-1}}, XLA's spelling of "all replicas" in pmap dumps) to `{}`,
/// so it spans all `cores`. Any other explicit grouping (several groups, a subset, iota forms,
/// collective-permute pairs) fixes the device count: InvalidArgument (file:line:col, caret) when
/// `cores` differs from it. Unimplemented for num_partitions > 1 (scaling varies replicas only).
Status RetargetReplicas(hlo::HloModule& module, int64_t cores, std::string_view file,
                        std::string_view source);

/// The row of one run (speedup and efficiency left for ComputeSpeedups).
ScalingRow ScalingRowOf(const RunModuleResult& r);

/// Fills speedup and efficiency of every row from cycles (the first row is the baseline).
void ComputeSpeedups(std::vector<ScalingRow>& rows);

struct ScalingRuns {
  std::vector<ScalingRow> rows;  // one per core count, speedups filled
  RunModuleResult last;          // the last count's run (its report is the one written)
};

/// The study: parses `source` (the HLO text of `file`) once per count of `core_counts`, retargets
/// it to that many replicas (RetargetReplicas) and runs it with `options` (replicas = the count,
/// megacore off: the table counts cores, one per replica); `options.sim.trace_sink` gets the last
/// count's run only. With `host` (not null) each row also gets its host loop (host_loop.h).
/// Errors: the parser's, RetargetReplicas', RunModule's, ComputeHostLoop's. `tpusim run --scaling`
/// and the Python package's run(scaling=...) use it.
StatusOr<ScalingRuns> RunScaling(std::string_view source, const std::string& file,
                                 const config::ChipConfig& chip, RunOptions options,
                                 const std::vector<int64_t>& core_counts,
                                 const HostLoopOptions* host = nullptr);

/// [{cores, cycles, seconds, speedup, efficiency, collective_cycles, check}].
Json ScalingJson(const std::vector<ScalingRow>& rows);

/// The readable table.
std::string ScalingText(const std::vector<ScalingRow>& rows);

}  // namespace tpusim::driver
