// The Chrome / Perfetto trace of a run (chrome://tracing JSON, "traceEvents"): one process per core
// (pid = global core id, named "chip<c>.core<k>"), one thread per unit (tid; named "sequencer",
// "mxu0", "vpu", "xlu", "dma0", "ici"), one complete ("X") event per executed instruction from its
// issue to its completion. `ts` and `dur` are MICROSECONDS OF SIMULATED TIME (cycles / clock_hz *
// 1e6, what the viewers expect); each event's args carry the exact cycles (`start_cycle`,
// `end_cycle`), the instruction index `pc` and its HLO tag name `hlo`. Written only when
// SimOptions::trace is on.
#pragma once

#include <string>

#include "common/json.h"
#include "common/status.h"
#include "isa/program.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

Json BuildTraceJson(const SimResult& result, const isa::Program& program);
Status WriteTrace(const std::string& path, const SimResult& result, const isa::Program& program);

}  // namespace tpusim::sim
