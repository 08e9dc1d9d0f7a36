// CheckChromeTrace: validates a trace against the rules of the Chrome trace-event format that
// Perfetto and chrome://tracing rely on — not only "is JSON". `tpusim trace-check FILE` runs it,
// and the test suite runs it on every trace it writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tpusim::sim {

struct TraceCheckSummary {
  uint64_t slices = 0;    // "X" events
  uint64_t counters = 0;  // "C" events
  uint64_t threads = 0;   // named (pid, tid) pairs
  uint64_t processes = 0;
};

/// Checks, in `json` (a whole trace):
///  - a top-level object whose `traceEvents` is an array of objects, each with a string `name`
///    and `ph` and an integer `pid`; `ph` is one of "X", "C", "M";
///  - "M" events are process_name / thread_name (args.name a string) or process_sort_index /
///    thread_sort_index (args.sort_index an integer); thread ones have an integer `tid`;
///  - "X" events have an integer `tid`, finite `ts` >= 0 and `dur` >= 0, and their (pid, tid) and
///    pid are named by "M" events (matching pids and tids);
///  - per (pid, tid), "X" events come in non-decreasing `ts` and nest: each one either starts at
///    or after the end of the previous one or lies inside an enclosing one (a tolerance of 1e-6 us
///    for the microsecond conversion); when args carry start_cycle / end_cycle, the same holds
///    exactly in cycles;
///  - "C" events have finite `ts` >= 0, an object `args` of finite numbers, and per (pid, name)
///    non-decreasing `ts`.
/// InvalidArgument naming the first broken rule and the index of the event in `traceEvents`.
StatusOr<TraceCheckSummary> CheckChromeTrace(std::string_view json);

}  // namespace tpusim::sim
