// Parser throughput (MB/s of HLO text) and verifier time on the real modules. Modules that are
// missing (the shared corpus lives outside the repository) are skipped. Run from the repository
// root:
//   build/benchmarks/hlo/bench_hlo
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "hlo/cost_analysis.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace {

std::vector<std::string> ModulePaths() {
  std::vector<std::string> out;
  for (const char* dir : {"tests/data/hlo", "../shared/hlo/real"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".hlo") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void BM_Parse(benchmark::State& state, std::string path) {
  tpusim::StatusOr<std::string> text = tpusim::ReadFile(path);
  if (!text.ok()) {
    state.SkipWithError("module missing");
    return;
  }
  for (auto _ : state) {
    auto m = tpusim::hlo::ParseHloModule(*text, path);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text->size()));
}

void BM_Verify(benchmark::State& state, std::string path) {
  auto m = tpusim::hlo::ParseHloModuleFile(path);
  if (!m.ok()) {
    state.SkipWithError("module missing or invalid");
    return;
  }
  for (auto _ : state) {
    tpusim::Status s = tpusim::hlo::VerifyModule(**m);
    benchmark::DoNotOptimize(s);
  }
  state.counters["instructions"] = static_cast<double>((*m)->instruction_count());
}

void BM_CostAnalysis(benchmark::State& state, std::string path) {
  auto m = tpusim::hlo::ParseHloModuleFile(path);
  if (!m.ok()) {
    state.SkipWithError("module missing or invalid");
    return;
  }
  for (auto _ : state) {
    auto c = tpusim::hlo::AnalyzeCost(**m);
    benchmark::DoNotOptimize(c);
  }
}

const bool kRegistered = [] {
  for (const std::string& p : ModulePaths()) {
    const std::string name = std::filesystem::path(p).stem().string();
    benchmark::RegisterBenchmark(("parse/" + name).c_str(), BM_Parse, p);
    benchmark::RegisterBenchmark(("verify/" + name).c_str(), BM_Verify, p);
    benchmark::RegisterBenchmark(("cost/" + name).c_str(), BM_CostAnalysis, p);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
