// Compile time per HLO instruction: compiler::Compile (passes + lowering to an isa::Program) of the
// real modules in tests/data/hlo/ and the generated workloads in benchmarks/workloads/, for tpu-v4
// (tpu-v1 for the int8 tpu_v1_* stacks), timing-only (no constant data materialized). Parsing is
// outside the timed loop (bench_hlo measures it). Modules the compiler rejects (unsupported ops)
// are reported with SkipWithError and the compiler's message. Run from the repository root:
//   build/benchmarks/compiler/bench_compiler
// Counters: hlo_instructions (of the parsed module, all computations), isa_instructions (emitted),
// time_per_hlo_instruction (mean CPU compile time / hlo_instructions, printed in s with an SI
// prefix).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "config/config_loader.h"
#include "hlo/parser.h"

namespace {

std::vector<std::string> ModulePaths() {
  std::vector<std::string> out;
  for (const char* dir : {"tests/data/hlo", "benchmarks/workloads"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".hlo") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void BM_Compile(benchmark::State& state, const std::string& path, const std::string& config_name) {
  auto module = tpusim::hlo::ParseHloModuleFile(path);
  if (!module.ok()) {
    state.SkipWithError(("parse: " + module.status().ToString()).c_str());
    return;
  }
  auto config = tpusim::config::LoadChipConfig(config_name);
  if (!config.ok()) {
    state.SkipWithError(("config: " + config.status().ToString()).c_str());
    return;
  }
  tpusim::compiler::CompileOptions options;
  options.timing_only = true;
  // One untimed compile: report unsupported modules instead of timing their error path.
  auto first = tpusim::compiler::Compile(**module, *config, options);
  if (!first.ok()) {
    state.SkipWithError(first.status().ToString().c_str());
    return;
  }
  double isa_instructions = 0;
  for (const auto& core : first->program.cores) {
    isa_instructions += static_cast<double>(core.instructions.size());
  }
  for (auto _ : state) {
    auto compiled = tpusim::compiler::Compile(**module, *config, options);
    benchmark::DoNotOptimize(compiled);
  }
  const double hlo_instructions = static_cast<double>((*module)->instruction_count());
  state.counters["hlo_instructions"] = hlo_instructions;
  state.counters["isa_instructions"] = isa_instructions;
  // kIsIterationInvariantRate | kInvert turns hlo_instructions into (CPU) seconds per instruction.
  state.counters["time_per_hlo_instruction"] =
      benchmark::Counter(hlo_instructions, benchmark::Counter::kIsIterationInvariantRate |
                                               benchmark::Counter::kInvert);
}

const bool kRegistered = [] {
  for (const std::string& p : ModulePaths()) {
    const std::string name = std::filesystem::path(p).stem().string();
    const std::string config = name.rfind("tpu_v1_", 0) == 0 ? "tpu-v1" : "tpu-v4";
    benchmark::RegisterBenchmark(("compile/" + name + "/" + config).c_str(), BM_Compile, p, config);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
