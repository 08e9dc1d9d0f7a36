#include "driver/cpu_anchor.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "hlo/eval/kernels/dot.h"
#include "hlo/eval/kernels/parallel.h"

namespace tpusim::driver {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs `body` once untimed, then timed until `budget` seconds are spent (at least once, at most
// `max_reps` times); returns the shortest timed run in seconds.
template <typename Body>
double BestOf(double budget, int max_reps, Body body) {
  body();
  const Clock::time_point start = Clock::now();
  double best = 1e300;
  for (int rep = 0; rep < max_reps; ++rep) {
    const Clock::time_point t0 = Clock::now();
    body();
    best = std::min(best, Since(t0));
    if (Since(start) > budget) break;
  }
  return best;
}

// Elements per block of the STREAM loops (fixed, like the evaluator's kernels).
constexpr int64_t kStreamBlock = int64_t{1} << 16;

}  // namespace

double CpuAnchor::ridge_flops_per_byte() const {
  const double bw = memory_bandwidth_bytes_per_s();
  return bw > 0 ? gemm_flops_per_s / bw : 0;
}

Json CpuAnchor::ToJson() const {
  Json j = Json::MakeObject();
  j["gemm_flops_per_s"] = gemm_flops_per_s;
  j["memory_bandwidth_bytes_per_s"] = memory_bandwidth_bytes_per_s();
  j["threads"] = threads;
  j["gemm_shape"] = Json::Array{Json(gemm_m), Json(gemm_k), Json(gemm_n)};
  j["gemm_dtype"] = "f32";
  j["copy_bytes_per_s"] = copy_bytes_per_s;
  j["triad_bytes_per_s"] = triad_bytes_per_s;
  j["stream_array_bytes"] = stream_elements * 4;
  j["ridge_flops_per_byte"] = ridge_flops_per_byte();
  j["seconds"] = seconds;
  return j;
}

CpuAnchor MeasureCpuAnchor(int threads, double budget_seconds) {
  const Clock::time_point start = Clock::now();
  CpuAnchor a;
  a.threads = std::max(threads, 1);
  // M and N span several of the evaluator's GEMM output tiles (128 x 512), so every thread of a
  // small host has work: 8 x 2 = 16 tiles.
  a.gemm_m = 1024;
  a.gemm_k = 512;
  a.gemm_n = 1024;
  {
    std::vector<float> lhs(static_cast<size_t>(a.gemm_m * a.gemm_k));
    std::vector<float> rhs(static_cast<size_t>(a.gemm_k * a.gemm_n));
    std::vector<float> out(static_cast<size_t>(a.gemm_m * a.gemm_n));
    for (size_t i = 0; i < lhs.size(); ++i) lhs[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    for (size_t i = 0; i < rhs.size(); ++i) rhs[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
    const double s = BestOf(0.4 * budget_seconds, 20, [&] {
      hlo::BatchedGemm<float>(lhs.data(), rhs.data(), out.data(), 1, a.gemm_m, a.gemm_k, a.gemm_n,
                              a.threads);
    });
    a.gemm_flops_per_s = 2.0 * static_cast<double>(a.gemm_m * a.gemm_k * a.gemm_n) / s;
  }
  {
    a.stream_elements = int64_t{8} << 20;
    const auto n = static_cast<size_t>(a.stream_elements);
    std::vector<float> x(n), y(n), z(n);
    // First touch in parallel, so pages land where the workers run.
    hlo::ParallelForBlocks(a.stream_elements, kStreamBlock, a.threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        x[static_cast<size_t>(i)] = 1.0f;
        y[static_cast<size_t>(i)] = 2.0f;
        z[static_cast<size_t>(i)] = 0.0f;
      }
    });
    const double bytes = static_cast<double>(a.stream_elements) * 4;
    const double copy_s = BestOf(0.25 * budget_seconds, 10, [&] {
      hlo::ParallelForBlocks(a.stream_elements, kStreamBlock, a.threads, [&](int64_t b, int64_t e) {
        std::copy(x.begin() + b, x.begin() + e, z.begin() + b);
      });
    });
    a.copy_bytes_per_s = 2 * bytes / copy_s;
    const float scalar = 3.0f;
    const double triad_s = BestOf(0.25 * budget_seconds, 10, [&] {
      hlo::ParallelForBlocks(a.stream_elements, kStreamBlock, a.threads, [&](int64_t b, int64_t e) {
        const float* yb = y.data();
        const float* zb = z.data();
        float* xb = x.data();
        for (int64_t i = b; i < e; ++i) xb[i] = yb[i] + scalar * zb[i];
      });
    });
    a.triad_bytes_per_s = 3 * bytes / triad_s;
  }
  a.seconds = Since(start);
  return a;
}

}  // namespace tpusim::driver
