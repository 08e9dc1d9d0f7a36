#include "sim/report/trace.h"

#include "common/file_util.h"

namespace tpusim::sim {

Json BuildTraceJson(const SimResult& result, const isa::Program& program) {
  Json events = Json::MakeArray();
  const double us_per_cycle = result.clock_hz > 0 ? 1e6 / result.clock_hz : 1.0;
  int last_pid = -1;
  for (const TraceTrack& t : result.trace_tracks) {
    if (t.pid != last_pid) {
      Json m;
      m["name"] = "process_name";
      m["ph"] = "M";
      m["pid"] = t.pid;
      m["args"]["name"] = t.process;
      events.push_back(std::move(m));
      last_pid = t.pid;
    }
    Json m;
    m["name"] = "thread_name";
    m["ph"] = "M";
    m["pid"] = t.pid;
    m["tid"] = t.tid;
    m["args"]["name"] = t.name;
    events.push_back(std::move(m));
  }
  for (const TraceEvent& e : result.trace_events) {
    const TraceTrack& t = result.trace_tracks[e.track];
    Json x;
    x["name"] = std::string(e.name);
    x["ph"] = "X";
    x["pid"] = t.pid;
    x["tid"] = t.tid;
    x["ts"] = static_cast<double>(e.start) * us_per_cycle;
    x["dur"] = static_cast<double>(e.end - e.start) * us_per_cycle;
    Json& args = x["args"];
    args["start_cycle"] = e.start;
    args["end_cycle"] = e.end;
    args["pc"] = e.pc;
    if (e.hlo_tag >= 0 && static_cast<size_t>(e.hlo_tag) < program.hlo_names.size()) {
      args["hlo"] = program.hlo_names[e.hlo_tag];
    }
    events.push_back(std::move(x));
  }
  Json root;
  root["traceEvents"] = std::move(events);
  root["displayTimeUnit"] = "ns";
  Json& meta = root["metadata"];
  meta["clock_hz"] = result.clock_hz;
  meta["time_unit"] = "microseconds of simulated time; args.start_cycle/end_cycle are exact cycles";
  meta["truncated"] = result.trace_truncated;
  return root;
}

Status WriteTrace(const std::string& path, const SimResult& result, const isa::Program& program) {
  return WriteFileAtomic(path, BuildTraceJson(result, program).Dump(0));
}

}  // namespace tpusim::sim
