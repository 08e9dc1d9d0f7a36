#include "sim/trace/trace_writer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "isa/footprint.h"
#include "isa/program.h"

namespace tpusim::sim {
namespace {

using nlohmann::json;

constexpr int kChipPidBase = 1 << 20;  // processes of the per-chip counters

// An output thread: slices on it nest or follow each other.
struct Lane {
  int tid = 0;
  uint64_t last_start = 0;
  std::vector<uint64_t> open_ends;  // ends of the slices enclosing the last one, outermost first
};

struct Counter {
  int pid = 0;
  std::string name;  // the counter track's name
  std::string key;   // its series ("GB/s", "bytes")
  double scale = 1;  // value written = value given * scale
  double last = -1;  // last value written (-1: none)
  bool has_pending = false;
  double pending = 0;  // the value before the window, written at window_start
};

struct Span {
  int32_t tag = -2;  // -2: none open
  int32_t pc = 0;
  uint64_t start = 0, end = 0;
};

// "mxu.load_weights" on an MXU's track goes to its own thread: an MXU loads the next tile's
// weights while it multiplies, and pops results while the next matmul streams.
std::string_view MxuVariant(std::string_view mnemonic) {
  if (mnemonic == "mxu.load_weights") return " weight loads";
  if (mnemonic == "mxu.matmul") return " matmuls";
  if (mnemonic == "mxu.pop") return " pops";
  return "";
}

int ChipOf(const std::string& path) {
  if (path.rfind("chip", 0) != 0) return -1;
  int chip = 0;
  size_t i = 4;
  if (i >= path.size() || path[i] < '0' || path[i] > '9') return -1;
  for (; i < path.size() && path[i] >= '0' && path[i] <= '9'; ++i)
    chip = chip * 10 + (path[i] - '0');
  return chip;
}

}  // namespace

struct TraceWriter::State {
  std::ostream& out;
  TraceWriterOptions options;
  double us_per_cycle = 1;
  bool first_record = true;
  const isa::Program* program = nullptr;
  std::vector<TraceTrack> tracks;
  std::map<std::pair<int, std::string>, std::vector<Lane>> lanes;  // (track, variant) -> lanes
  std::map<int, int> next_tid;                                     // per pid
  std::vector<int> hlo_tid;                                        // per core
  std::vector<Span> spans;                                         // per core
  std::vector<std::vector<int64_t>> vmem_top;                      // per core, per HLO tag
  std::vector<Counter> counters;  // resources, then one "VMEM in use" per core
  size_t vmem_counter_base = 0;

  State(std::ostream& o, TraceWriterOptions opts) : out(o), options(std::move(opts)) {}

  bool InWindow(uint64_t start, uint64_t end) const {
    return end > options.window_start && start < options.window_end;
  }

  void Write(const json& record) {
    out << (first_record ? "\n" : ",\n") << record.dump();
    first_record = false;
  }

  // A counted record ("X" or "C"): false when the event cap dropped it.
  bool Count(TraceSummary& summary, uint64_t start_cycle) {
    if (options.max_events > 0 && summary.events_written >= options.max_events) {
      // The record that met the cap: records come in about simulated-time order, so this is
      // about where the written trace ends (a minimum over later records would not be).
      if (!summary.truncated) summary.first_dropped_cycle = start_cycle;
      summary.truncated = true;
      ++summary.events_dropped;
      return false;
    }
    ++summary.events_written;
    return true;
  }

  void NameProcess(int pid, const std::string& name, int sort) {
    Write({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
    Write({{"name", "process_sort_index"},
           {"ph", "M"},
           {"pid", pid},
           {"args", {{"sort_index", sort}}}});
  }

  int NewThread(int pid, const std::string& name) {
    const int tid = next_tid[pid]++;
    Write({{"name", "thread_name"},
           {"ph", "M"},
           {"pid", pid},
           {"tid", tid},
           {"args", {{"name", name}}}});
    Write({{"name", "thread_sort_index"},
           {"ph", "M"},
           {"pid", pid},
           {"tid", tid},
           {"args", {{"sort_index", tid}}}});
    return tid;
  }

  // The thread of track `track` (variant) where [start, end) nests or follows: the first lane that
  // takes it, or a new one.
  int PlaceSlice(int track, std::string_view variant, uint64_t start, uint64_t end) {
    std::vector<Lane>& ls = lanes[{track, std::string(variant)}];
    for (Lane& lane : ls) {
      while (!lane.open_ends.empty() && lane.open_ends.back() <= start) lane.open_ends.pop_back();
      if (start < lane.last_start) continue;
      if (!lane.open_ends.empty() && end > lane.open_ends.back()) continue;
      lane.open_ends.push_back(end);
      lane.last_start = start;
      return lane.tid;
    }
    const TraceTrack& t = tracks[static_cast<size_t>(track)];
    std::string name = t.name + std::string(variant);
    if (!ls.empty()) name += " (" + std::to_string(ls.size() + 1) + ")";
    Lane lane;
    lane.tid = NewThread(t.pid, name);
    lane.last_start = start;
    lane.open_ends.push_back(end);
    ls.push_back(std::move(lane));
    return ls.back().tid;
  }

  json Slice(const std::string& name, int pid, int tid, uint64_t start, uint64_t end) const {
    return {{"name", name},
            {"ph", "X"},
            {"pid", pid},
            {"tid", tid},
            {"ts", static_cast<double>(start) * us_per_cycle},
            {"dur",
             static_cast<double>(end) * us_per_cycle - static_cast<double>(start) * us_per_cycle},
            {"args", {{"start_cycle", start}, {"end_cycle", end}}}};
  }

  void WriteCounter(Counter& c, uint64_t at, double value) {
    Write({{"name", c.name},
           {"ph", "C"},
           {"pid", c.pid},
           {"ts", static_cast<double>(at) * us_per_cycle},
           {"args", {{c.key, value}}}});
    c.last = value;
  }

  void SetCounter(TraceSummary& summary, size_t index, uint64_t at, double raw) {
    Counter& c = counters[index];
    const double value = raw * c.scale;
    if (at < options.window_start) {
      c.has_pending = true;
      c.pending = value;
      return;
    }
    if (at >= options.window_end) return;
    FlushPending(summary, c);
    if (value == c.last) return;
    if (!Count(summary, at)) {
      c.last = value;  // dropped, but later values compare with it as in an uncapped trace
      return;
    }
    WriteCounter(c, at, value);
  }

  void FlushPending(TraceSummary& summary, Counter& c) {
    if (!c.has_pending) return;
    c.has_pending = false;
    if (c.pending == c.last) return;
    if (!Count(summary, options.window_start)) {
      c.last = c.pending;
      return;
    }
    WriteCounter(c, options.window_start, c.pending);
  }

  void FlushSpan(TraceSummary& summary, int core) {
    Span& s = spans[static_cast<size_t>(core)];
    if (s.tag == -2 || s.end <= s.start) {
      s.tag = -2;
      return;
    }
    const std::vector<std::string>& names = program->hlo_names;
    const bool tagged = s.tag >= 0 && static_cast<size_t>(s.tag) < names.size();
    if (tagged && static_cast<size_t>(core) < vmem_top.size()) {
      SetCounter(
          summary, vmem_counter_base + static_cast<size_t>(core), s.start,
          static_cast<double>(vmem_top[static_cast<size_t>(core)][static_cast<size_t>(s.tag)]));
    }
    if (InWindow(s.start, s.end) && Count(summary, s.start)) {
      json slice = Slice(tagged ? names[static_cast<size_t>(s.tag)] : "(untagged)", core,
                         hlo_tid[static_cast<size_t>(core)], s.start, s.end);
      slice["args"]["first_pc"] = s.pc;
      Write(slice);
    }
    s.tag = -2;
  }

  // Per core, per HLO tag: the highest VMEM byte its instructions address (+1).
  void ComputeVmemTops() {
    vmem_top.assign(program->cores.size(), std::vector<int64_t>(program->hlo_names.size(), 0));
    for (size_t c = 0; c < program->cores.size(); ++c) {
      const isa::CoreProgram& core = program->cores[c];
      for (size_t pc = 0; pc < core.instructions.size(); ++pc) {
        const int32_t tag = core.hlo_tag(pc);
        if (tag < 0 || static_cast<size_t>(tag) >= program->hlo_names.size()) continue;
        const isa::Footprint f =
            isa::InstructionFootprint(core.instructions[pc], static_cast<int>(c), *program);
        int64_t& top = vmem_top[c][static_cast<size_t>(tag)];
        for (const auto* regions : {&f.reads, &f.writes}) {
          for (const isa::Region& r : *regions) {
            if (r.space == isa::MemSpace::kVmem && r.core == static_cast<int32_t>(c)) {
              top = std::max(top, static_cast<int64_t>(r.hi));
            }
          }
        }
      }
    }
  }
};

TraceWriter::TraceWriter(std::ostream& out, TraceWriterOptions options)
    : s_(std::make_unique<State>(out, std::move(options))) {}

TraceWriter::~TraceWriter() = default;

void TraceWriter::Begin(const std::vector<TraceTrack>& tracks, const isa::Program& program,
                        double clock_hz, const std::vector<std::string>& resources) {
  State& s = *s_;
  s.program = &program;
  s.tracks = tracks;
  s.us_per_cycle = clock_hz > 0 ? 1e6 / clock_hz : 1.0;
  s.out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  const int cores = static_cast<int>(program.cores.size());
  s.hlo_tid.assign(static_cast<size_t>(cores), 0);
  s.spans.assign(static_cast<size_t>(cores), Span{});
  std::map<int, std::string> processes;
  for (const TraceTrack& t : tracks) processes.emplace(t.pid, t.process);
  for (int c = 0; c < cores; ++c) {
    auto it = processes.find(c);
    s.NameProcess(c, it != processes.end() ? it->second : "core" + std::to_string(c), c);
    s.hlo_tid[static_cast<size_t>(c)] = s.NewThread(c, "HLO ops");
  }
  std::map<int, bool> chip_named;
  for (const std::string& r : resources) {
    const int chip = ChipOf(r);
    const int pid = kChipPidBase + std::max(chip, 0);
    if (!chip_named[pid]) {
      s.NameProcess(pid, "chip" + std::to_string(std::max(chip, 0)) + " memory and ICI", pid);
      chip_named[pid] = true;
    }
    Counter c;
    c.pid = pid;
    c.name = r + " bandwidth";
    c.key = "GB/s";
    c.scale = clock_hz / 1e9;  // bytes/cycle -> GB/s
    s.counters.push_back(std::move(c));
  }
  s.vmem_counter_base = s.counters.size();
  for (int c = 0; c < cores; ++c) {
    Counter v;
    v.pid = c;
    v.name = "VMEM in use";
    v.key = "bytes";
    s.counters.push_back(std::move(v));
  }
  s.ComputeVmemTops();
}

void TraceWriter::Instruction(const TraceEvent& e) {
  State& s = *s_;
  if (!s.InWindow(e.start, e.end) || !s.Count(summary_, e.start)) return;
  const TraceTrack& t = s.tracks[static_cast<size_t>(e.track)];
  const std::string_view variant = t.name.rfind("mxu", 0) == 0 ? MxuVariant(e.name) : "";
  const int tid = s.PlaceSlice(e.track, variant, e.start, e.end);
  json slice = s.Slice(std::string(e.name), t.pid, tid, e.start, e.end);
  slice["args"]["pc"] = e.pc;
  if (e.hlo_tag >= 0 && static_cast<size_t>(e.hlo_tag) < s.program->hlo_names.size()) {
    slice["args"]["hlo"] = s.program->hlo_names[static_cast<size_t>(e.hlo_tag)];
  }
  s.Write(slice);
}

void TraceWriter::Retired(int core, uint64_t from, uint64_t to, int32_t pc, int32_t hlo_tag) {
  State& s = *s_;
  if (core < 0 || static_cast<size_t>(core) >= s.spans.size() || to <= from) return;
  Span& span = s.spans[static_cast<size_t>(core)];
  if (span.tag == hlo_tag && span.end == from) {
    span.end = to;
    return;
  }
  s.FlushSpan(summary_, core);
  span = Span{hlo_tag, pc, from, to};
}

void TraceWriter::Bandwidth(int resource, uint64_t at, double bytes_per_cycle) {
  State& s = *s_;
  if (resource < 0 || static_cast<size_t>(resource) >= s.vmem_counter_base) return;
  s.SetCounter(summary_, static_cast<size_t>(resource), at, bytes_per_cycle);
}

void TraceWriter::End(uint64_t cycles) {
  State& s = *s_;
  summary_.cycles = cycles;
  for (size_t c = 0; c < s.spans.size(); ++c) s.FlushSpan(summary_, static_cast<int>(c));
  if (s.options.window_start < cycles) {
    for (Counter& c : s.counters) s.FlushPending(summary_, c);
  }
  json meta = {
      {"clock_hz", s.us_per_cycle > 0 ? 1e6 / s.us_per_cycle : 0.0},
      {"time_unit", "microseconds of simulated time; args.start_cycle/end_cycle are exact cycles"},
      {"cycles", cycles},
      {"events_written", summary_.events_written},
      {"truncated", summary_.truncated},
      {"events_dropped", summary_.events_dropped},
      {"max_events", s.options.max_events},
      {"window_start_cycle", s.options.window_start},
  };
  if (summary_.truncated) meta["first_dropped_cycle"] = summary_.first_dropped_cycle;
  if (s.options.window_end != std::numeric_limits<uint64_t>::max()) {
    meta["window_end_cycle"] = s.options.window_end;
  }
  s.out << "\n],\"metadata\":" << meta.dump() << "}\n";
  s.out.flush();
}

}  // namespace tpusim::sim
