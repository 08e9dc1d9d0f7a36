// The collectives section of a run's report: per core, the cycles it waited on ICI (the ici_bound
// stall category: the oldest unfinished instruction a collective or remote DMA and no MXU busy)
// beside the rest of its cycles, its collective unit's busy time and bytes sent; per ICI link
// direction, the bytes it carried and the bandwidth achieved.
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

/// Bandwidth achieved while busy (bytes/s): `bytes` over `busy_cycles` cycles at `clock_hz`; 0 if
/// never busy.
double BusyBandwidthBytesPerSecond(uint64_t bytes, uint64_t busy_cycles, double clock_hz);

/// {"per_core": [{"core", "path", "cycles", "collective_cycles", "compute_cycles",
/// "ici_unit_busy_cycles", "ici_bytes_sent", "collectives"}], "links": [{"link", "bytes",
/// "busy_cycles", "busy_bandwidth_bytes_per_s", "average_bandwidth_bytes_per_s"}]}
/// (docs/report-schema.md, `collectives`). compute_cycles = cycles - collective_cycles; the
/// average bandwidth is bytes over the run's seconds.
Json CollectiveReportJson(const SimResult& result);

/// The same as a table ("" for a run of one core and no ICI link); links that carried no byte are
/// left out.
std::string CollectiveReportText(const SimResult& result);

}  // namespace tpusim::sim
