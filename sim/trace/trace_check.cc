#include "sim/trace/trace_check.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

namespace tpusim::sim {
namespace {

using nlohmann::json;

constexpr double kTolUs = 1e-6;

struct Open {
  double end_us;
  bool has_cycles;
  uint64_t end_cycle;
};
struct ThreadState {
  double last_ts = -1;
  bool has_cycles = false;
  uint64_t last_start_cycle = 0;
  std::vector<Open> open;
};

bool IsInt(const json& j) { return j.is_number_integer() || j.is_number_unsigned(); }
bool IsFinite(const json& j) { return j.is_number() && std::isfinite(j.get<double>()); }

Status Bad(size_t i, const std::string& what) {
  return InvalidArgument(fmt::format("traceEvents[{}]: {}", i, what));
}

// Nesting of slice [ts, ts + dur) (cycles [s, e) when known) on its thread.
Status CheckSlice(size_t i, const json& e, ThreadState& t) {
  const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
  if (ts + kTolUs < t.last_ts) {
    return Bad(i, fmt::format("ts {} is before the previous slice's ts {} on the same thread "
                              "(timestamps must not decrease per thread)",
                              ts, t.last_ts));
  }
  const json* args = e.contains("args") ? &e["args"] : nullptr;
  const bool cycles = args && args->is_object() && args->contains("start_cycle") &&
                      args->contains("end_cycle") && IsInt((*args)["start_cycle"]) &&
                      IsInt((*args)["end_cycle"]);
  uint64_t s = 0, end = 0;
  if (cycles) {
    s = (*args)["start_cycle"].get<uint64_t>();
    end = (*args)["end_cycle"].get<uint64_t>();
    if (end < s) return Bad(i, "end_cycle before start_cycle");
    if (t.has_cycles && s < t.last_start_cycle) return Bad(i, "start_cycle decreases on its thread");
  }
  while (!t.open.empty() && t.open.back().end_us <= ts + kTolUs &&
         (!cycles || !t.open.back().has_cycles || t.open.back().end_cycle <= s)) {
    t.open.pop_back();
  }
  if (!t.open.empty()) {
    const Open& outer = t.open.back();
    if (ts + dur > outer.end_us + kTolUs ||
        (cycles && outer.has_cycles && end > outer.end_cycle)) {
      return Bad(i, fmt::format("slice \"{}\" [{}, {}) us overlaps the slice ending at {} us on "
                                "the same thread without nesting in it",
                                e["name"].get<std::string>(), ts, ts + dur, outer.end_us));
    }
  }
  t.open.push_back({ts + dur, cycles, end});
  t.last_ts = ts;
  if (cycles) {
    t.has_cycles = true;
    t.last_start_cycle = s;
  }
  return OkStatus();
}

Status CheckMetadata(size_t i, const json& e, std::set<int64_t>& processes,
                     std::set<std::pair<int64_t, int64_t>>& threads) {
  const std::string name = e["name"].get<std::string>();
  const json& args = e.contains("args") ? e["args"] : json();
  const bool thread = name == "thread_name" || name == "thread_sort_index";
  if (name != "process_name" && name != "thread_name" && name != "process_sort_index" &&
      name != "thread_sort_index") {
    return Bad(i, "unknown metadata event \"" + name + "\"");
  }
  if (!args.is_object()) return Bad(i, "metadata without args");
  if (name.ends_with("_name") && !(args.contains("name") && args["name"].is_string())) {
    return Bad(i, name + " without a string args.name");
  }
  if (name.ends_with("_sort_index") && !(args.contains("sort_index") && IsInt(args["sort_index"]))) {
    return Bad(i, name + " without an integer args.sort_index");
  }
  if (thread && !(e.contains("tid") && IsInt(e["tid"]))) return Bad(i, name + " without a tid");
  const int64_t pid = e["pid"].get<int64_t>();
  if (name == "process_name") processes.insert(pid);
  if (name == "thread_name") threads.insert({pid, e["tid"].get<int64_t>()});
  return OkStatus();
}

}  // namespace

StatusOr<TraceCheckSummary> CheckChromeTrace(std::string_view text) {
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgument("not JSON");
  if (!root.is_object() || !root.contains("traceEvents") || !root["traceEvents"].is_array()) {
    return InvalidArgument("expected an object with a \"traceEvents\" array");
  }
  const json& events = root["traceEvents"];
  TraceCheckSummary summary;
  std::set<int64_t> processes;
  std::set<std::pair<int64_t, int64_t>> threads, used_threads;
  std::set<int64_t> used_processes;
  std::map<std::pair<int64_t, int64_t>, ThreadState> state;
  std::map<std::pair<int64_t, std::string>, double> counter_ts;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object()) return Bad(i, "not an object");
    if (!e.contains("name") || !e["name"].is_string()) return Bad(i, "no string \"name\"");
    if (!e.contains("ph") || !e["ph"].is_string()) return Bad(i, "no string \"ph\"");
    if (!e.contains("pid") || !IsInt(e["pid"])) return Bad(i, "no integer \"pid\"");
    const std::string ph = e["ph"].get<std::string>();
    const int64_t pid = e["pid"].get<int64_t>();
    if (ph == "M") {
      TPUSIM_RETURN_IF_ERROR(CheckMetadata(i, e, processes, threads));
      continue;
    }
    if (!e.contains("ts") || !IsFinite(e["ts"]) || e["ts"].get<double>() < 0) {
      return Bad(i, "no finite \"ts\" >= 0");
    }
    if (ph == "X") {
      if (!e.contains("tid") || !IsInt(e["tid"])) return Bad(i, "slice without an integer tid");
      if (!e.contains("dur") || !IsFinite(e["dur"]) || e["dur"].get<double>() < 0) {
        return Bad(i, "slice without a finite \"dur\" >= 0");
      }
      const std::pair<int64_t, int64_t> key{pid, e["tid"].get<int64_t>()};
      used_threads.insert(key);
      used_processes.insert(pid);
      TPUSIM_RETURN_IF_ERROR(CheckSlice(i, e, state[key]));
      ++summary.slices;
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) {
        return Bad(i, "counter without args");
      }
      for (const auto& [k, v] : e["args"].items()) {
        if (!IsFinite(v)) return Bad(i, "counter series \"" + k + "\" is not a finite number");
      }
      double& last = counter_ts.try_emplace({pid, e["name"].get<std::string>()}, -1.0).first->second;
      const double ts = e["ts"].get<double>();
      if (ts + kTolUs < last) return Bad(i, "counter ts decreases");
      last = ts;
      used_processes.insert(pid);
      ++summary.counters;
    } else {
      return Bad(i, "unexpected phase \"" + ph + "\" (tpusim writes X, C and M events)");
    }
  }
  for (const auto& [pid, tid] : used_threads) {
    if (!threads.count({pid, tid})) {
      return InvalidArgument(fmt::format("pid {} tid {} has slices but no thread_name", pid, tid));
    }
  }
  for (int64_t pid : used_processes) {
    if (!processes.count(pid)) {
      return InvalidArgument(fmt::format("pid {} has events but no process_name", pid));
    }
  }
  summary.threads = threads.size();
  summary.processes = processes.size();
  return summary;
}

}  // namespace tpusim::sim
