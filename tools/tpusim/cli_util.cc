#include "tools/tpusim/cli_util.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string_view>

#include "config/config_loader.h"
#include "driver/limits.h"
#include "isa/interpreter.h"
#include "isa/work_units.h"
#include "hlo/sharding.h"

namespace tpusim::cli {

hlo::LoadedHloModule LoadModuleOrFail(const std::string& path) {
  hlo::LoadedHloModule loaded = OrFail(hlo::LoadHloModule(path));
  for (const std::string& note : loaded.notes) spdlog::warn("{}", note);
  return loaded;
}

void Fail(const Status& status) {
  // Located messages ("file:line:col: error: ...") already say "error"; others get the prefix.
  const std::string& m = status.message();
  if (m.find(": error: ") != std::string::npos) {
    std::cerr << m << std::endl;
  } else {
    std::cerr << "tpusim: error: " << m << std::endl;
  }
  throw CLI::RuntimeError(ExitCodeFor(status.code()));
}

CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(v >= 0)) {
          return "expected a number >= 0, got " + text;
        }
        return "";
      },
      "NUMBER>=0");
}

CLI::Validator DeviceCount() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int64_t v = -1;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0 ||
            v > hlo::kMaxDevices) {
          return fmt::format("expected a device count from 0 to {}, got {}", hlo::kMaxDevices,
                             text);
        }
        return "";
      },
      "0..1048576");
}

CLI::Validator IntegerIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::string_view t = text;
        if (!t.empty() && t.front() == '+') t.remove_prefix(1);
        const std::string_view digits = !t.empty() && t.front() == '-' ? t.substr(1) : t;
        int64_t v = 0;
        const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
        const bool ok = !digits.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size() &&
                        (digits.size() == 1 || digits.front() != '0') && v >= lo && v <= hi;
        if (ok) return "";
        return fmt::format("expected a decimal integer from {} to {}, got {}", lo, hi, text);
      },
      lo == 0 ? "INTEGER>=0" : "");
}

namespace {

// The check MakeIntegerOptionsStrict adds to 64-bit options without their own: any int64 (or
// uint64 when `is_unsigned`).
CLI::Validator IntegerText(bool is_unsigned) {
  if (is_unsigned) {
    return CLI::Validator(
        [](std::string& text) -> std::string {
          std::string_view digits = text;
          const bool negative = !digits.empty() && digits.front() == '-';
          if (!digits.empty() && (negative || digits.front() == '+')) digits.remove_prefix(1);
          uint64_t v = 0;
          const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
          const bool ok = !digits.empty() && r.ec == std::errc() &&
                          r.ptr == digits.data() + digits.size() &&
                          (digits.size() == 1 || digits.front() != '0') && (!negative || v == 0);
          if (ok) return "";
          return fmt::format("expected a decimal integer from 0 to {}, got {}",
                             std::numeric_limits<uint64_t>::max(), text);
        },
        "");
  }
  return IntegerIn(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
}

}  // namespace

void MakeIntegerOptionsStrict(CLI::App* app) {
  for (CLI::Option* option : app->get_options()) {
    std::string type = option->get_type_name();
    type = type.substr(0, type.find(':'));
    if (type == "INT" || type == "UINT") option->check(IntegerText(type == "UINT"));
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    MakeIntegerOptionsStrict(sub);
  }
}

void AddLimitOptions(CLI::App* cmd, double* max_seconds) {
  auto bytes = std::make_shared<int64_t>(0);
  cmd->add_option("--max-memory", *bytes,
                  "stop with an out-of-memory error (exit 2) past this many bytes of address "
                  "space, in every phase (0: none)")
      ->check(IntegerOf<int64_t>(0));
  cmd->add_option("--max-seconds", *max_seconds,
                  "stop with an error (exit 2) after this many wall-clock seconds, in every phase: "
                  "parse, compile, evaluate, interpret, simulate (0: none)")
      ->check(NonNegative());
  cmd->parse_complete_callback([bytes, max_seconds] {
    driver::SetMemoryLimit(*bytes);
    driver::StartDeadline(*max_seconds);
  });
}

void AddWorkBudgetOption(CLI::App* cmd, uint64_t* max_work) {
  *max_work = isa::kDefaultWorkBudget;
  cmd->add_option("--max-instructions", *max_work,
                  fmt::format(
                      "work budget of the interpreter and of the simulator, all cores, in units "
                      "of about 0.3 ns of host time: each instruction executed counts {} (every "
                      "loop trip) plus its element work, weighted by its measured cost (a DMA's "
                      "bytes and rows, a matmul's multiply-accumulates, a vector op's elements; "
                      "the simulator: only with values, plus PE steps on --mxu-model pe); a "
                      "program whose loops surely need more is refused before it runs, with the "
                      "figure it needs (default 10^11: about 30 s of each engine)",
                      isa::kInstructionWorkUnits))
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text.find_first_not_of("+0") != std::string::npos) return "";
            return "expected a positive number of work units, got " + text;
          },
          "UINT>0"));
}

void SimulatorOptions::AddTo(CLI::App* cmd, sim::SimOptions* sim) {
  cmd->add_option("--mxu-model", mxu_model, "fast (closed form) or pe (every PE, slow)")
      ->check(CLI::IsMember({"fast", "pe"}));
  cmd->add_option("--max-cycles", max_cycles, "stop with an error past this many cycles");
  AddWorkBudgetOption(cmd, &sim->max_work);
  AddLimitOptions(cmd, &sim->max_seconds);
  AddOnOffFlags(cmd, "fast-forward", &sim->fast_forward,
                "in timing-only runs, skip loop trips that repeat an earlier trip's timing "
                "exactly (the default; same cycles and statistics)",
                "simulate every loop trip");
}

void SimulatorOptions::ApplyTo(sim::SimOptions& sim) const {
  sim.mxu_model = OrFail(sim::ParseMxuModelKind(mxu_model));
  sim.max_cycles = Cycles(max_cycles);
}

void AddOnOffFlags(CLI::App* cmd, const std::string& name, bool* value, const std::string& on_help,
                   const std::string& off_help) {
  cmd->add_flag_callback(
      fmt::format("--{}", name), [value] { *value = true; }, on_help);
  cmd->add_flag_callback(
      fmt::format("--no-{}", name), [value] { *value = false; }, off_help);
}

void ConfigOptions::AddTo(CLI::App* cmd) {
  config = config::kDefaultConfigName;
  cmd->add_option("-c,--config", config,
                  "chip config: a YAML path or a name in configs/ (default: tpu-v4)");
  cmd->add_option("--set", overrides, "override a config key, e.g. --set core.mxu.rows=256")
      ->take_all()
      ->allow_extra_args(false);
}

config::ChipConfig ConfigOptions::Load() const {
  return OrFail(config::LoadChipConfig(config, overrides));
}

namespace {

// Repeated NAME=COUNT entries with COUNT >= 0; InvalidArgument "FLAG: expected FORM, got ...".
StatusOr<std::map<std::string, int64_t>> ParseNamedCounts(const std::vector<std::string>& entries,
                                                          std::string_view flag,
                                                          std::string_view form) {
  std::map<std::string, int64_t> out;
  for (const std::string& e : entries) {
    const size_t eq = e.rfind('=');
    int64_t count = -1;
    if (eq != std::string::npos && eq > 0 && eq + 1 < e.size()) {
      const char* first = e.data() + eq + 1;
      const char* last = e.data() + e.size();
      auto [ptr, ec] = std::from_chars(first, last, count);
      if (ec != std::errc() || ptr != last) count = -1;
    }
    if (count < 0) {
      return InvalidArgument(std::string(flag) + ": expected " + std::string(form) + ", got \"" +
                             e + "\"");
    }
    out[e.substr(0, eq)] = count;
  }
  return out;
}

}  // namespace

StatusOr<std::map<std::string, int64_t>> ParseCustomCallCosts(
    const std::vector<std::string>& entries) {
  return ParseNamedCounts(entries, "--custom-call-cost", "TARGET=CYCLES with CYCLES >= 0");
}

StatusOr<std::map<std::string, int64_t>> ParseTripCounts(const std::vector<std::string>& entries) {
  return ParseNamedCounts(entries, "--trip-count", "NAME=N with N >= 0");
}

}  // namespace tpusim::cli
