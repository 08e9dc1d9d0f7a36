// The CPU anchor of `tpusim compare`: this host's own roofline, measured in the same run as the
// module's CPU time, so that figure can be judged against what the host can do at all.
//
//  * GEMM: f32 C[M,N] = A[M,K] x W[K,N] with M = K = N = 512 through the evaluator's own GEMM path
//    (hlo::BatchedGemm: Eigen tiles spread over `threads` threads, the kernel every f32 `dot` of
//    the CPU evaluator uses). FLOP = 2*M*K*N per product; the figure is the best of the timed
//    repetitions (FLOP/s), after one warm-up.
//  * Memory: STREAM-like kernels (McCalpin's STREAM, www.cs.virginia.edu/stream/ref.html) over
//    three f32 arrays of 8 Mi elements (32 MiB each, far beyond the caches), split over the same
//    threads: copy c[i] = a[i] counts 8 bytes per element, triad a[i] = b[i] + s*c[i] counts 12
//    (STREAM's convention: write-allocate traffic is not counted). Best of the repetitions,
//    after a first-touch pass.
//
// The whole measurement is bounded by `budget_seconds` (it stops repeating once spent; at least
// one timed repetition of each kernel runs). Numbers depend on the host and its load: they are
// measurements, not model figures, and are never compared in tests.
#pragma once

#include <cstdint>

#include "common/json.h"

namespace tpusim::driver {

struct CpuAnchor {
  int threads = 1;
  int64_t gemm_m = 512, gemm_k = 512, gemm_n = 512;
  double gemm_flops_per_s = 0;   // FLOP/s, best repetition
  int64_t stream_elements = 0;   // per array (f32)
  double copy_bytes_per_s = 0;   // bytes/s, best repetition
  double triad_bytes_per_s = 0;  // bytes/s, best repetition
  double seconds = 0;            // wall time of the whole measurement

  /// The memory figure quoted as "memory bandwidth": triad (the one STREAM summaries quote).
  double memory_bandwidth_bytes_per_s() const { return triad_bytes_per_s; }
  /// The host's ridge point: FLOP per byte where GEMM rate = bandwidth * intensity.
  double ridge_flops_per_byte() const;

  /// {"gemm_flops_per_s", "memory_bandwidth_bytes_per_s", "threads", "gemm_shape": [M,K,N],
  ///  "copy_bytes_per_s", "triad_bytes_per_s", "stream_array_bytes", "ridge_flops_per_byte",
  ///  "seconds"}.
  Json ToJson() const;
};

/// Measures the anchor with `threads` threads (>= 1) within about `budget_seconds` (> 0).
CpuAnchor MeasureCpuAnchor(int threads, double budget_seconds = 0.6);

}  // namespace tpusim::driver
