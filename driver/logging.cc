#include "driver/logging.h"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>

#include "isa/opcode.h"

namespace tpusim::driver {
namespace {

LogOptions& Options() {
  static LogOptions options;
  return options;
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

// The progress logger: stderr, the message only; on a terminal no end of line (each message
// starts with "\r" and clears the line, so the next rewrites it).
std::shared_ptr<spdlog::logger> ProgressLogger() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("progress", sink);
    l->set_formatter(std::make_unique<spdlog::pattern_formatter>(
        "%v", spdlog::pattern_time_type::local, StderrIsTerminal() ? "" : "\n"));
    l->set_level(spdlog::level::info);
    l->flush_on(spdlog::level::info);
    return l;
  }();
  return logger;
}

std::string Count(uint64_t n) {
  if (n >= 10'000'000'000ULL) return fmt::format("{:.1f}G", static_cast<double>(n) / 1e9);
  if (n >= 10'000'000) return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
  if (n >= 100'000) return fmt::format("{:.1f}k", static_cast<double>(n) / 1e3);
  return fmt::format("{}", n);
}

std::string Seconds(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
}

}  // namespace

void SetUpLogging(const LogOptions& options) {
  Options() = options;
  // spdlog's default logger writes to stdout; tpusim's logs go to stderr, beside its errors, so
  // that stdout carries only the table or the JSON asked for.
  static const bool replaced = [] {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "tpusim", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
    return true;
  }();
  (void)replaced;
  spdlog::set_pattern("tpusim: %^%l%$: %v");
  if (options.quiet) {
    spdlog::set_level(spdlog::level::err);
  } else if (options.verbosity >= 2) {
    spdlog::set_level(spdlog::level::debug);
  } else if (options.verbosity == 1) {
    spdlog::set_level(spdlog::level::info);
  } else {
    spdlog::set_level(spdlog::level::warn);
  }
}

const LogOptions& CurrentLogOptions() { return Options(); }

bool ChattyOutput() { return !Options().quiet; }

std::string FormatProgress(const sim::SimProgress& p) {
  std::string out = fmt::format("cycle {}", p.cycle.value());
  const double share = p.instructions_total > 0
                           ? std::min(1.0, static_cast<double>(p.instructions_retired) /
                                               static_cast<double>(p.instructions_total))
                           : 0.0;
  out += fmt::format(" · {:.1f}% of {} instructions retired", 100 * share,
                     Count(p.instructions_total));
  if (p.loop_trips_total > 0) {
    out += fmt::format(" · loop trips {}/{}", Count(p.loop_trips), Count(p.loop_trips_total));
  }
  out += fmt::format(" · {} elapsed", Seconds(p.elapsed_seconds));
  if (!p.done) {
    if (share >= 0.01) {
      out += fmt::format(", about {} left", Seconds(p.elapsed_seconds * (1 - share) / share));
    } else {
      out += ", time left unknown";
    }
  }
  return out;
}

std::string FormatCheckProgress(const CheckProgress& p) {
  const double share = p.instructions_total > 0
                           ? std::min(1.0, static_cast<double>(p.instructions_done) /
                                               static_cast<double>(p.instructions_total))
                           : 0.0;
  std::string out =
      fmt::format("evaluator pass {}/2 ({}) · {:.1f}% of {} HLO instructions · {} elapsed", p.pass,
                  p.pass == 1 ? "TPU numerics" : "full f32", 100 * share,
                  Count(static_cast<uint64_t>(p.instructions_total)), Seconds(p.elapsed_seconds));
  if (!p.done) {
    out += share >= 0.01
               ? fmt::format(", about {} left", Seconds(p.elapsed_seconds * (1 - share) / share))
               : ", time left unknown";
  }
  return out;
}

namespace {

// Prints one phase's progress lines: none for a phase shorter than kProgressAfterSeconds (unless
// --progress always), then on a terminal one line rewritten in place, in a pipe one line every
// kPipeProgressSeconds; a last "done" line when any was shown.
std::function<void(double elapsed, bool done, const std::string& text)> PhasePrinter(
    const std::string& what) {
  const LogOptions& o = Options();
  if (o.quiet || o.progress == ProgressMode::kNever) return {};
  struct State {
    bool shown = false;
    double last_line = -1e9;
  };
  auto state = std::make_shared<State>();
  const bool tty = StderrIsTerminal();
  const bool always = o.progress == ProgressMode::kAlways;
  return [state, tty, always, what](double elapsed, bool done, const std::string& text) {
    auto logger = ProgressLogger();
    if (done) {
      if (!state->shown && !always) return;
      logger->info("{}tpusim: {} done: {}{}", tty ? "\r\x1b[K" : "", what, text, tty ? "\n" : "");
      state->shown = false;
      state->last_line = -1e9;
      return;
    }
    if (!always && elapsed < kProgressAfterSeconds) return;
    if (!tty && state->shown && elapsed - state->last_line < kPipeProgressSeconds) return;
    state->shown = true;
    state->last_line = elapsed;
    logger->info("{}tpusim: {}: {}", tty ? "\r\x1b[K" : "", what, text);
  };
}

}  // namespace

std::function<void(const sim::SimProgress&)> SimProgressPrinter(const std::string& what) {
  auto line = PhasePrinter(what);
  if (!line) return {};
  return [line](const sim::SimProgress& p) { line(p.elapsed_seconds, p.done, FormatProgress(p)); };
}

std::function<void(const CheckProgress&)> CheckProgressPrinter(const std::string& what) {
  auto line = PhasePrinter(what);
  if (!line) return {};
  return [line](const CheckProgress& p) {
    // Formatting is cheap next to evaluating an instruction, but skip it for the lines the
    // printer would drop anyway: the first kProgressAfterSeconds of a pass.
    if (!p.done && p.elapsed_seconds < kProgressAfterSeconds &&
        CurrentLogOptions().progress != ProgressMode::kAlways) {
      return;
    }
    line(p.elapsed_seconds, p.done, FormatCheckProgress(p));
  };
}

void LogCompiled(const compiler::CompiledModule& compiled) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  double pass_total = 0;
  for (const compiler::PassTiming& t : compiled.pass_timings) {
    pass_total += t.seconds;
    spdlog::info("pass {:<28} {:9.2f} ms{}", t.name, 1e3 * t.seconds,
                 t.changed ? "  (changed the module)" : "");
  }
  const isa::Program& program = compiled.program;
  std::string per_core;
  size_t instructions = 0;
  for (const isa::CoreProgram& core : program.cores) {
    instructions += core.instructions.size();
    if (per_core.size() < 80) per_core += fmt::format(" {}", core.instructions.size());
  }
  spdlog::info(
      "compiled: {} passes in {:.2f} ms, lowered in {:.2f} ms to {} kernels (HLO ops), {} ISA "
      "instructions on {} cores (per core:{}{})",
      compiled.pass_timings.size(), 1e3 * pass_total, 1e3 * compiled.lowering_seconds,
      program.hlo_names.size(), instructions, program.cores.size(), per_core,
      per_core.size() >= 80 ? " ..." : "");
  if (!spdlog::should_log(spdlog::level::debug) || program.cores.empty()) return;
  // Per kernel, on core 0 (the other cores of a replicated module run the same kernels).
  const isa::CoreProgram& core = program.cores.front();
  std::vector<std::map<std::string, int64_t>> units(program.hlo_names.size());
  for (size_t pc = 0; pc < core.instructions.size(); ++pc) {
    const int32_t tag = core.hlo_tag(pc);
    if (tag < 0 || static_cast<size_t>(tag) >= units.size()) continue;
    ++units[tag][std::string(isa::UnitName(isa::Info(core.instructions[pc].opcode).unit))];
  }
  for (size_t t = 0; t < units.size(); ++t) {
    std::string detail;
    int64_t total = 0;
    for (const auto& [unit, n] : units[t]) {
      detail += fmt::format(" {}={}", unit, n);
      total += n;
    }
    spdlog::debug("kernel {} ({}): {} instructions on core 0:{}", program.hlo_names[t],
                  t < compiled.hlo_opcodes.size() ? compiled.hlo_opcodes[t] : "", total, detail);
  }
}

}  // namespace tpusim::driver
