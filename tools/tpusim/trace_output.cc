#include "tools/tpusim/trace_output.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>

namespace tpusim::cli {
namespace {

bool ParseCycle(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

void TraceArgs::AddTo(CLI::App* cmd) {
  cmd->add_option("--trace", path,
                  "write a Chrome/Perfetto trace (ui.perfetto.dev), streamed while the run lasts");
  cmd->add_option("--trace-max-events", max_events,
                  "stop writing trace events after N slices and counter values, with a warning "
                  "(default 4000000; 0: no limit)");
  cmd->add_option("--trace-window", window,
                  "START:END: trace only cycles [START, END) (START: from START to the end)");
}

Status ParseTraceWindow(const std::string& text, uint64_t* start, uint64_t* end) {
  const size_t colon = text.find(':');
  uint64_t s = 0, e = std::numeric_limits<uint64_t>::max();
  const bool ok = colon != std::string::npos &&
                  ParseCycle(std::string_view(text).substr(0, colon), &s) &&
                  (colon + 1 == text.size() ||
                   ParseCycle(std::string_view(text).substr(colon + 1), &e)) &&
                  s < e;
  if (!ok) {
    return InvalidArgument("--trace-window " + text +
                           ": expected START:END in cycles with START < END (or START:)");
  }
  *start = s;
  *end = e;
  return OkStatus();
}

StatusOr<std::unique_ptr<TraceOutput>> TraceOutput::Open(const TraceArgs& args,
                                                         OutputSet& outputs) {
  if (args.path.empty()) {
    if (!args.window.empty()) return InvalidArgument("--trace-window needs --trace FILE");
    return std::unique_ptr<TraceOutput>();
  }
  auto out = std::make_unique<TraceOutput>();
  out->path_ = args.path;
  out->options_.max_events = args.max_events;
  if (!args.window.empty()) {
    TPUSIM_RETURN_IF_ERROR(
        ParseTraceWindow(args.window, &out->options_.window_start, &out->options_.window_end));
  }
  TPUSIM_RETURN_IF_ERROR(outputs.Declare("--trace", args.path));
  TPUSIM_ASSIGN_OR_RETURN(std::ostream * stream, outputs.Stream("--trace"));
  out->writer_ = std::make_unique<sim::TraceWriter>(*stream, out->options_);
  return out;
}

void TraceOutput::Finish() const {
  const sim::TraceSummary& s = writer_->summary();
  if (s.truncated) {
    const double covered =
        s.cycles > 0 ? 100.0 * static_cast<double>(s.first_dropped_cycle) / static_cast<double>(s.cycles)
                     : 0.0;
    spdlog::warn(
        "THE TRACE IS INCOMPLETE: --trace-max-events {} was reached, {} later events were not "
        "written; {} holds cycles up to about {} of {} ({:.1f}% of the run). Raise "
        "--trace-max-events or trace a part with --trace-window START:END",
        options_.max_events, s.events_dropped, path_, s.first_dropped_cycle, s.cycles, covered);
  }
}

Json TraceOutput::ReportJson() const {
  const sim::TraceSummary& s = writer_->summary();
  Json j = Json::MakeObject();
  j["file"] = path_;
  j["events_written"] = s.events_written;
  j["truncated"] = s.truncated;
  j["events_dropped"] = s.events_dropped;
  if (s.truncated) j["first_dropped_cycle"] = s.first_dropped_cycle;
  j["max_events"] = options_.max_events;
  j["window_start_cycle"] = options_.window_start;
  if (options_.window_end != std::numeric_limits<uint64_t>::max()) {
    j["window_end_cycle"] = options_.window_end;
  }
  return j;
}

}  // namespace tpusim::cli
