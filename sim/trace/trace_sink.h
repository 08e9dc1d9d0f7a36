// TraceSink: where a simulation sends its timeline while it runs (SimOptions::trace_sink). The
// units call it as things happen; a sink may keep the records (TraceCollector, tests) or stream
// them to a file (sim/trace/trace_writer.h) so that memory does not grow with the trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpusim::isa {
struct Program;
}

namespace tpusim::sim {

/// One unit of a core: a Perfetto / Chrome trace track.
struct TraceTrack {
  int pid = 0;  // global core id (chip * tensorcores + core)
  int tid = 0;
  std::string process;  // "chip0.core1"
  std::string name;     // "mxu0", "vpu", "dma1", "ici", "sequencer"
};

/// One executed instruction on its unit's track, [start, end) in core cycles.
struct TraceEvent {
  int track = 0;  // index into the tracks given to TraceSink::Begin
  uint64_t start = 0;
  uint64_t end = 0;  // > start
  int32_t pc = 0;
  int32_t hlo_tag = -1;
  std::string_view name;  // the mnemonic (static storage)
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  /// Before the run: every unit track, the program, the core clock (Hz), the memory/link
  /// resources whose bandwidth Bandwidth() reports (stat paths: "chip0.hbm", "chip0.ici.x+", ...).
  virtual void Begin(const std::vector<TraceTrack>& tracks, const isa::Program& program,
                     double clock_hz, const std::vector<std::string>& resources) = 0;
  /// An instruction finished (called in retirement order per core).
  virtual void Instruction(const TraceEvent& event) = 0;
  /// In-order retirement charged core cycles [from, to) of `core` to instruction `pc` (HLO op
  /// tag `hlo_tag`, -1 if none): the cycles the report attributes to that op.
  virtual void Retired(int core, uint64_t from, uint64_t to, int32_t pc, int32_t hlo_tag) = 0;
  /// From cycle `at`, resource `resource` (index into Begin's `resources`) carries
  /// `bytes_per_cycle` in total over its active transfers.
  virtual void Bandwidth(int resource, uint64_t at, double bytes_per_cycle) = 0;
  /// After the run: its length in cycles.
  virtual void End(uint64_t cycles) = 0;
};

/// Keeps the instruction events in memory, up to `max_events` (then `truncated`): tests and
/// SimResult::trace_events.
class TraceCollector : public TraceSink {
 public:
  explicit TraceCollector(uint64_t max_events) : max_events_(max_events) {}
  void Begin(const std::vector<TraceTrack>& tracks, const isa::Program&, double,
             const std::vector<std::string>&) override {
    tracks_ = tracks;
  }
  void Instruction(const TraceEvent& event) override {
    if (events_.size() < max_events_) {
      events_.push_back(event);
    } else {
      truncated_ = true;
    }
  }
  void Retired(int, uint64_t, uint64_t, int32_t, int32_t) override {}
  void Bandwidth(int, uint64_t, double) override {}
  void End(uint64_t) override {}

  std::vector<TraceTrack>& tracks() { return tracks_; }
  std::vector<TraceEvent>& events() { return events_; }
  bool truncated() const { return truncated_; }

 private:
  uint64_t max_events_;
  std::vector<TraceTrack> tracks_;
  std::vector<TraceEvent> events_;
  bool truncated_ = false;
};

}  // namespace tpusim::sim
