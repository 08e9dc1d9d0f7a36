// Throughput of the CPU evaluator's dot and convolution kernels, in FLOP/s (2 FLOP per
// multiply-add), for a few sizes and thread counts. `bench_eval --benchmark_counters_tabular=true`.
#include <benchmark/benchmark.h>

#include "hlo/eval/kernels/convolution.h"
#include "hlo/eval/kernels/dot.h"

namespace tpusim::hlo {
namespace {

Literal Random(PrimitiveType t, std::vector<int64_t> dims) {
  Literal l = Literal::Create(Shape(t, std::move(dims))).value();
  FillRandom(l, 1, "bench");
  return l;
}

// args: M=K=N, threads, bf16 (0/1).
void BM_Dot(benchmark::State& state) {
  const int64_t n = state.range(0);
  const PrimitiveType t = state.range(2) ? PrimitiveType::kBF16 : PrimitiveType::kF32;
  Literal a = Random(t, {n, n}), b = Random(t, {n, n});
  DotDimensionNumbers dn;
  dn.lhs_contracting_dimensions = {1};
  dn.rhs_contracting_dimensions = {0};
  KernelOptions o;
  o.threads = static_cast<int>(state.range(1));
  Shape out(t, {n, n});
  for (auto _ : state) {
    auto r = DotGeneral(a, b, dn, out, o);
    benchmark::DoNotOptimize(r);
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Dot)
    ->Args({128, 1, 0})
    ->Args({512, 1, 0})
    ->Args({512, 2, 0})
    ->Args({512, 1, 1})
    ->Unit(benchmark::kMillisecond);

// NHWC 3x3 convolution, stride 1, SAME padding: args = H(=W), C(=O), threads.
void BM_Conv3x3(benchmark::State& state) {
  const int64_t h = state.range(0), c = state.range(1);
  Literal x = Random(PrimitiveType::kF32, {1, h, h, c});
  Literal k = Random(PrimitiveType::kF32, {3, 3, c, c});
  ConvolutionParams p;
  for (int i = 0; i < 2; ++i) {
    WindowDimension w;
    w.size = 3;
    w.padding_low = w.padding_high = 1;
    p.window.dimensions.push_back(w);
  }
  p.dnums.input_batch_dimension = 0;
  p.dnums.input_spatial_dimensions = {1, 2};
  p.dnums.input_feature_dimension = 3;
  p.dnums.kernel_spatial_dimensions = {0, 1};
  p.dnums.kernel_input_feature_dimension = 2;
  p.dnums.kernel_output_feature_dimension = 3;
  p.dnums.output_batch_dimension = 0;
  p.dnums.output_spatial_dimensions = {1, 2};
  p.dnums.output_feature_dimension = 3;
  KernelOptions o;
  o.threads = static_cast<int>(state.range(2));
  Shape out(PrimitiveType::kF32, {1, h, h, c});
  for (auto _ : state) {
    auto r = Convolution(x, k, p, out, o);
    benchmark::DoNotOptimize(r);
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * h * h * c * c * 9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Conv3x3)
    ->Args({56, 64, 1})
    ->Args({56, 64, 2})
    ->Args({28, 128, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpusim::hlo

BENCHMARK_MAIN();
