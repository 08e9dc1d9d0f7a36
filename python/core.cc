// tpusim._core: pybind11 bindings of the C++ libraries for the Python package (python/tpusim/).
//
// The bindings are thin on purpose: each function parses and verifies the HLO exactly as the
// `tpusim` command does, calls the same driver (driver/: RunModule, RunScaling, RunCompare)
// and returns the same JSON report (docs/report-schema.md) as a string; python/tpusim/report.py
// turns it into typed objects. Nothing is re-implemented here.
//
// Errors: a non-ok Status is raised as the tpusim.errors class of its code (InvalidInputError,
// NotFoundError, UnsupportedError, ResourceExhaustedError, CheckFailedError, InternalError) with
// the located message ("file:line:col: error: ..." or "config.yaml: key.path: ...") unchanged.
// Runs release the GIL; the simulator's own limits (max_cycles, max_seconds) bound their length.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config_loader.h"
#include "config/derived.h"
#include "driver/compare.h"
#include "driver/host_cpu.h"
#include "driver/host_loop.h"
#include "driver/logging.h"
#include "driver/provenance.h"
#include "driver/run_module.h"
#include "driver/run_report.h"
#include "driver/scaling.h"
#include "hlo/eval/cpu_run.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace py = pybind11;

namespace tpusim::python {
namespace {

// The tpusim.errors class for a status code.
const char* ErrorClassName(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return "InvalidInputError";
    case StatusCode::kNotFound:
      return "NotFoundError";
    case StatusCode::kUnimplemented:
      return "UnsupportedError";
    case StatusCode::kResourceExhausted:
      return "ResourceExhaustedError";
    case StatusCode::kCheckFailed:
      return "CheckFailedError";
    default:
      return "InternalError";
  }
}

[[noreturn]] void Raise(const Status& status) {
  py::object cls = py::module_::import("tpusim.errors").attr(ErrorClassName(status.code()));
  PyErr_SetObject(cls.ptr(), py::str(status.message()).ptr());
  throw py::error_already_set();
}

template <typename T>
T ValueOrRaise(StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return std::move(v).value();
}

// Parses and verifies like `tpusim run`: errors name `filename` with line:column and a caret.
std::unique_ptr<hlo::HloModule> ParseVerified(const std::string& text, const std::string& filename,
                                              int64_t partitions) {
  std::unique_ptr<hlo::HloModule> module = ValueOrRaise(hlo::ParseHloModule(text, filename));
  Status verified = hlo::VerifyModule(*module, text);
  if (!verified.ok()) Raise(verified);
  if (partitions > 0) module->set_num_partitions(partitions);
  return module;
}

config::ChipConfig LoadConfig(const std::string& name_or_path,
                              const std::vector<std::string>& overrides) {
  return ValueOrRaise(config::LoadChipConfig(name_or_path, overrides));
}

// `report` with the `provenance` of `tpusim run` (driver/provenance.h): the command line is
// the Python process's (`argv`: the interpreter and sys.argv), and `python_call` the call that made
// the report.
Json WithPythonProvenance(const Json& report, const config::ChipConfig& chip,
                          const std::vector<std::string>& argv, const std::string& python_call) {
  std::vector<const char*> args;
  for (const std::string& a : argv) args.push_back(a.c_str());
  driver::SetCommandLine(static_cast<int>(args.size()), args.data());
  Json out = driver::WithProvenance(report, chip);
  out["provenance"]["python_call"] = python_call;
  return out;
}

// Runs one module (or the --scaling study when `scaling` is not empty) and returns the report JSON
// of `tpusim run --report` (with "scaling" when asked, and `provenance`).
std::string Run(const std::string& text, const std::string& filename,
                const config::ChipConfig& chip, int64_t replicas, int64_t partitions,
                bool timing_only, bool check, uint64_t seed, bool megacore, int64_t unroll_budget,
                uint64_t max_cycles, double max_seconds, int64_t max_check_bytes,
                int64_t max_check_traffic, const std::map<std::string, int64_t>& custom_call_costs,
                const std::vector<int64_t>& scaling, int64_t steps, bool host_input,
                const std::vector<int64_t>& host_input_params, const std::vector<std::string>& argv,
                const std::string& python_call) {
  if (replicas < 0 || partitions < 0 || unroll_budget < 0 || max_seconds < 0 ||
      max_check_bytes < 0 || max_check_traffic < 0 || steps < 0) {
    Raise(InvalidArgument(
        "replicas, partitions, unroll_budget, max_seconds, max_check_bytes, max_check_traffic and "
        "steps must be >= 0"));
  }
  std::unique_ptr<hlo::HloModule> module = ParseVerified(text, filename, partitions);
  driver::RunOptions options;
  options.replicas = replicas;
  options.timing_only = timing_only;
  options.check = check;
  options.seed = seed;
  options.megacore = megacore;
  options.max_unrolled_instructions = unroll_budget;
  options.max_check_bytes = max_check_bytes;
  options.max_check_traffic = max_check_traffic;
  options.custom_call_cycles = custom_call_costs;
  options.sim.max_cycles = Cycles(max_cycles);
  options.sim.max_seconds = max_seconds;
  const bool host_loop = steps > 0 || host_input;
  const driver::HostLoopOptions host{std::max<int64_t>(1, steps), host_input, host_input_params};
  StatusOr<driver::RunModuleResult> result = Status();
  StatusOr<driver::ScalingRuns> runs = Status();
  {
    py::gil_scoped_release release;
    if (scaling.empty()) {
      result = driver::RunModule(*module, chip, options);
    } else {
      runs = driver::RunScaling(text, filename, chip, options, scaling,
                                host_loop ? &host : nullptr);
    }
  }
  Json report;
  const driver::RunModuleResult* last = nullptr;
  driver::ScalingRuns r;
  if (scaling.empty()) {
    r.last = ValueOrRaise(std::move(result));
  } else {
    r = ValueOrRaise(std::move(runs));
  }
  last = &r.last;
  report = driver::RunReportJson(*last, filename);
  if (!scaling.empty()) report["scaling"] = driver::ScalingJson(r.rows);
  if (host_loop) {
    report["host_loop"] =
        driver::HostLoopJson(ValueOrRaise(driver::ComputeHostLoop(*last, host)), last->config);
  }
  return WithPythonProvenance(report, chip, argv, python_call).Dump();
}

// `tpusim compare`'s JSON (driver/compare.h: CompareJson).
std::string Compare(const std::string& text, const std::string& filename,
                    const config::ChipConfig& chip, int64_t replicas, int repeat, int threads,
                    uint64_t seed, bool check, bool timing_only, bool anchor,
                    const std::vector<std::string>& argv, const std::string& python_call) {
  if (replicas < 0 || repeat < 1 || threads < 0) {
    Raise(InvalidArgument("compare: replicas >= 0, repeat >= 1 and threads >= 0 are required"));
  }
  std::unique_ptr<hlo::HloModule> module = ParseVerified(text, filename, 0);
  driver::CompareOptions options;
  options.replicas = replicas;
  options.repeat = repeat;
  options.threads = threads;
  options.seed = seed;
  options.check = check;
  options.timing_only = timing_only;
  options.anchor = anchor;
  StatusOr<driver::CompareResult> result = Status();
  {
    py::gil_scoped_release release;
    result = driver::RunCompare(*module, filename, chip, options);
  }
  return WithPythonProvenance(driver::CompareJson(ValueOrRaise(std::move(result))), chip, argv,
                              python_call)
      .Dump();
}

// `tpusim cpu MODEL --inputs DIR --outputs DIR`: the CPU evaluator on param_<i>.npy inputs, writing
// output_<k>.npy (replica_<d>/... for several devices). Returns the number of output files.
int64_t Evaluate(const std::string& text, const std::string& filename,
                 const std::string& inputs_dir, const std::string& outputs_dir, int64_t replicas,
                 int64_t partitions, uint64_t seed) {
  if (replicas < 0 || partitions < 0)
    Raise(InvalidArgument("replicas and partitions must be >= 0"));
  std::unique_ptr<hlo::HloModule> module = ParseVerified(text, filename, 0);
  hlo::CpuRunOptions options;
  options.replicas = replicas;
  options.partitions = partitions;
  options.inputs_dir = inputs_dir;
  options.outputs_dir = outputs_dir;
  options.repeat = 1;
  options.seed = seed;
  StatusOr<hlo::CpuRunResult> result = Status();
  {
    py::gil_scoped_release release;
    result = driver::RunOnHostCpu(*module, options);
  }
  return static_cast<int64_t>(ValueOrRaise(std::move(result)).outputs.size());
}

}  // namespace
}  // namespace tpusim::python

PYBIND11_MODULE(_core, m) {
  using namespace tpusim;
  using namespace tpusim::python;
  m.doc() = "tpusim's C++ libraries (compiler, simulator, driver); use the tpusim package instead";
  // The command's default logging: warnings and errors on stderr ("tpusim: warning: ..."), no
  // per-pass info lines (spdlog's own default level, info, would print them in every notebook).
  driver::LogOptions log;
  log.progress = driver::ProgressMode::kNever;
  driver::SetUpLogging(log);

  py::class_<config::ChipConfig>(m, "ChipConfig",
                                 "A loaded, validated chip config (config/chip_config.h).")
      .def_readonly("name", &config::ChipConfig::name, "the config's `name` key")
      .def_readonly("source_path", &config::ChipConfig::source_path, "the YAML file read")
      .def_readonly("clock_hz", &config::ChipConfig::clock_hz, "chip.clock_hz (Hz)")
      .def_readonly("tensorcores_per_chip", &config::ChipConfig::tensorcores,
                    "chip.tensorcores: TensorCores per chip")
      .def_readonly("host_bandwidth_bytes_per_s", &config::ChipConfig::host_bandwidth_bytes_per_s,
                    "chip.host.bandwidth_bytes_per_s: PCIe, one direction (bytes/s)")
      .def_property_readonly(
          "chips", [](const config::ChipConfig& c) { return c.system.chips; }, "system.chips")
      .def_property_readonly(
          "total_cores", [](const config::ChipConfig& c) { return c.total_cores(); },
          "system.chips x chip.tensorcores")
      .def(
          "derived_json",
          [](const config::ChipConfig& c) {
            return config::DerivedToJson(c, config::Derive(c)).Dump();
          },
          "`tpusim config show --json`: peaks (FLOP/s), bandwidths (bytes/s), ridge (FLOP/byte)");

  m.def("load_config", &LoadConfig, py::arg("name_or_path"), py::arg("overrides"),
        "Loads a YAML config (a path, or a name in $TPUSIM_CONFIG_DIR / configs/) with "
        "'key.path=value' overrides.");
  m.def("run", &Run, py::arg("text"), py::arg("filename"), py::arg("config"), py::kw_only(),
        py::arg("replicas"), py::arg("partitions"), py::arg("timing_only"), py::arg("check"),
        py::arg("seed"), py::arg("megacore"), py::arg("unroll_budget"), py::arg("max_cycles"),
        py::arg("max_seconds"), py::arg("max_check_bytes"), py::arg("max_check_traffic"),
        py::arg("custom_call_costs"), py::arg("scaling"), py::arg("steps"), py::arg("host_input"),
        py::arg("host_input_params"), py::arg("argv"), py::arg("python_call"),
        "Compiles, simulates and checks an HLO module; returns the report JSON.");
  m.def("compare", &Compare, py::arg("text"), py::arg("filename"), py::arg("config"), py::kw_only(),
        py::arg("replicas"), py::arg("repeat"), py::arg("threads"), py::arg("seed"),
        py::arg("check"), py::arg("timing_only"), py::arg("anchor"), py::arg("argv"),
        py::arg("python_call"),
        "Simulated TPU time beside the measured CPU time of the same module; returns JSON.");
  m.def("evaluate", &Evaluate, py::arg("text"), py::arg("filename"), py::arg("inputs_dir"),
        py::arg("outputs_dir"), py::kw_only(), py::arg("replicas"), py::arg("partitions"),
        py::arg("seed"),
        "The CPU evaluator on .npy inputs (param_<i>.npy); writes output_<k>.npy.");
  m.attr("default_config_name") = config::kDefaultConfigName;
}
