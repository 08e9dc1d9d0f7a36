// Speed of the two MXU models (Google Benchmark): simulated cycles and MACs per host second, for
// the PE-level reference (32x32 and 128x128 arrays) and the closed-form fast model (128x128, a long
// stream of folds), so the cost of each is on record. Run: build-*/benchmarks/mxu/bench_mxu
#include <benchmark/benchmark.h>

#include <bit>
#include <random>

#include "sim/core/mxu_model.h"

namespace tpusim::sim {
namespace {

std::vector<float> RandomBf16s(std::mt19937_64& rng, int64_t count) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = std::bit_cast<float>(std::bit_cast<uint32_t>(u(rng)) & 0xffff0000u);
  return v;
}

// `folds` weight tiles of R x C (double-buffered), each streamed by M LHS rows accumulating into
// the same accumulator rows.
void RunStream(benchmark::State& state, MxuModelKind kind, int64_t dim, int64_t m, int64_t folds,
               bool values) {
  MxuArrayConfig cfg;
  cfg.rows = cfg.cols = dim;
  cfg.accumulator_rows = m;
  cfg.compute_values = values;
  std::mt19937_64 rng(1);
  const std::vector<float> w = values ? RandomBf16s(rng, dim * dim) : std::vector<float>{};
  const std::vector<float> lhs = values ? RandomBf16s(rng, m * dim) : std::vector<float>{};
  uint64_t cycles = 0, macs = 0;
  for (auto _ : state) {
    auto mxu = CreateMxuModel(kind, cfg);
    if (!mxu.ok()) state.SkipWithError(mxu.status().message().c_str());
    for (int64_t f = 0; f < folds; ++f) {
      (void)(*mxu)->Issue(MxuOp::LoadWeights(dim, dim, w), Cycles(0));
      (void)(*mxu)->Issue(MxuOp::MatMul(m, dim, lhs, true, f > 0, 0), Cycles(0));
    }
    const MxuCounters& c = (*mxu)->counters();  // the PE model simulates to the end here
    benchmark::DoNotOptimize(&(*mxu)->accumulators());
    cycles += c.last_done.value();
    macs += c.useful_macs;
  }
  state.counters["sim_cycles_per_s"] =
      benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsRate);
  state.counters["macs_per_s"] =
      benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsRate);
}

void BM_PeModel_32x32_M256(benchmark::State& s) {
  RunStream(s, MxuModelKind::kPe, 32, 256, 4, true);
}
void BM_PeModel_128x128_M256(benchmark::State& s) {
  RunStream(s, MxuModelKind::kPe, 128, 256, 2, true);
}
void BM_FastModel_32x32_M256(benchmark::State& s) {
  RunStream(s, MxuModelKind::kFast, 32, 256, 4, true);
}
void BM_FastModel_128x128_M256_values(benchmark::State& s) {
  RunStream(s, MxuModelKind::kFast, 128, 256, 64, true);
}
void BM_FastModel_128x128_M256_timing_only(benchmark::State& s) {
  RunStream(s, MxuModelKind::kFast, 128, 256, 4096, false);
}

BENCHMARK(BM_PeModel_32x32_M256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PeModel_128x128_M256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FastModel_32x32_M256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FastModel_128x128_M256_values)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FastModel_128x128_M256_timing_only)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpusim::sim
