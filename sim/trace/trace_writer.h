// TraceWriter: streams a run's timeline as Chrome trace-event JSON (ui.perfetto.dev,
// chrome://tracing) while the simulation runs. Each record is serialized with nlohmann::json and
// written at once: memory holds only per-track state (open slices, one pending span per core),
// never the trace, so it stays flat however long the run.
//
// What is written (all `ts`/`dur` in MICROSECONDS OF SIMULATED TIME, cycles / clock_hz * 1e6;
// each slice's args carry the exact `start_cycle` and `end_cycle`):
//  - per core a process (pid = global core id, "chip0.core1") with
//    - "HLO ops": one slice per stretch of cycles in-order retirement charged to one HLO op or
//      fusion (the cycles of the report's per-op table); never overlapping;
//    - one thread per unit ("vpu", "xlu", "dma0", "ici", "sequencer") and, per MXU, one each for
//      its weight loads, matmuls and pops, which overlap in a pipelined MXU: one slice per executed
//      instruction, from the cycle its unit took it to its completion;
//    - a counter "VMEM in use" (bytes): the highest VMEM byte addressed by the running HLO op's
//      instructions (its kernel's allocation, which starts at address 0);
//  - per chip a process "chipN memory and ICI" with a bandwidth counter (GB/s) per HBM, host link
//    and ICI link direction, exact: the sum of the transfer network's rates at every change.
// Slices on one thread always nest or follow each other: an instruction that would overlap a slice
// of its thread without nesting goes to an overflow thread ("dma0 (2)"). Threads and processes are
// named with metadata ("M") events.
//
// Limits: `max_events` slices and counter values (then `truncated`; later records are counted, not
// written) and a window [window_start, window_end) of cycles: only slices overlapping it and
// counter values inside it (plus each counter's value at window_start) are written.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sim/trace/trace_sink.h"

namespace tpusim::sim {

struct TraceWriterOptions {
  uint64_t max_events = 4'000'000;  // --trace-max-events; 0: no limit
  uint64_t window_start = 0;        // --trace-window START:END (cycles)
  uint64_t window_end = std::numeric_limits<uint64_t>::max();
};

/// What the writer did: written to the report's `trace` object and warned about when truncated.
struct TraceSummary {
  uint64_t events_written = 0;  // slices and counter values ("X" and "C")
  uint64_t events_dropped = 0;  // past max_events
  bool truncated = false;
  uint64_t first_dropped_cycle = 0;  // start of the record that met the cap (records arrive in
                                     // about simulated-time order)
  uint64_t cycles = 0;               // the run's length
};

class TraceWriter : public TraceSink {
 public:
  /// Writes to `out` (which must outlive the writer); the JSON is complete after End().
  TraceWriter(std::ostream& out, TraceWriterOptions options);
  ~TraceWriter() override;

  void Begin(const std::vector<TraceTrack>& tracks, const isa::Program& program, double clock_hz,
             const std::vector<std::string>& resources) override;
  void Instruction(const TraceEvent& event) override;
  void Retired(int core, uint64_t from, uint64_t to, int32_t pc, int32_t hlo_tag) override;
  void Bandwidth(int resource, uint64_t at, double bytes_per_cycle) override;
  void End(uint64_t cycles) override;

  const TraceSummary& summary() const { return summary_; }

 private:
  struct State;
  std::unique_ptr<State> s_;
  TraceSummary summary_;
};

}  // namespace tpusim::sim
