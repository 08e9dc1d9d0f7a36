// Simulator speed: simulated cycles and instructions per host second on a large GEMM program, with
// the fast and the PE-level MXU model. The GEMM is C[M, N] = A[M, K] x B[K, N] on one TensorCore
// with one 128 x 128 MXU: for each (N tile, K tile): DMA the weight tile in, load it, stream all M
// rows (accumulating over K), then pop the N tile; DMAs are double-buffered with sync flags.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "isa/assembler.h"
#include "sim/simulator.h"

namespace tpusim::sim {
namespace {

config::ChipConfig BenchChip() {
  // TPU-v4-like core (one MXU of 128 x 128, 1.05 GHz, 1.2 TB/s HBM); figures only set the scale.
  config::ChipConfig c;
  c.name = "bench";
  c.clock_hz = 1.05e9;
  c.hbm.capacity_bytes = int64_t{1} << 32;
  c.hbm.bandwidth_bytes_per_s = 1.2e12;
  c.hbm.latency_cycles = 500;
  c.core.mxu.rows = 128;
  c.core.mxu.cols = 128;
  c.core.mxu.accumulator_rows = 2048;
  c.core.mxu.pop_latency_cycles = 8;
  c.core.vmem_bytes = 16 << 20;
  c.core.vmem_bytes_per_cycle = 4096;
  c.core.smem_bytes = 1 << 20;
  c.core.dma_engines = 4;
  return c;
}

// M x K x N GEMM in bf16 with f32 accumulation; K and N multiples of 128, M <= 2048.
isa::Program GemmProgram(int m, int k, int n) {
  const int kt = k / 128, nt = n / 128;
  const uint64_t a_bytes = static_cast<uint64_t>(m) * k * 2;
  std::string s;
  // A stays in VMEM at 0 (loaded once); weight tiles double-buffer at 8 MiB and 8 MiB + 32 KiB.
  s += "dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=2, n0=" + std::to_string(m * k) + "\n";
  s += "sync.wait flag=0\n";
  const uint64_t wbuf[2] = {8u << 20, (8u << 20) + 32768};
  const uint64_t b_base = a_bytes;
  int tile = 0;
  auto fetch = [&](int j, int kk, int buf) {
    // B tile (kk, j): 128 rows of 128 bf16 from the [K, N] row-major matrix.
    uint64_t src =
        b_base + (static_cast<uint64_t>(kk) * 128 * n + static_cast<uint64_t>(j) * 128) * 2;
    s += "dma.hbm_to_vmem flag=" + std::to_string(1 + buf) + ", src=" + std::to_string(src) +
         ", dst=" + std::to_string(wbuf[buf]) +
         ", elem_bytes=2, n0=128, n1=128, src_s1=" + std::to_string(n * 2) + ", dst_s1=256\n";
  };
  fetch(0, 0, 0);
  for (int j = 0; j < nt; ++j) {
    for (int kk = 0; kk < kt; ++kk, ++tile) {
      const int buf = tile % 2;
      s += "sync.wait flag=" + std::to_string(1 + buf) + "\n";
      s += "mxu.load_weights mxu=0, addr=" + std::to_string(wbuf[buf]) +
           ", k=128, n=128, stride=128, dtype=bf16\n";
      int nj = j, nk = kk + 1;
      if (nk == kt) nk = 0, ++nj;
      if (nj < nt) fetch(nj, nk, 1 - buf);
      s += "mxu.matmul mxu=0, lhs=" + std::to_string(kk * 256) + ", stride=" + std::to_string(k) +
           ", m=" + std::to_string(m) + ", k=128, n=128, dtype=bf16, acc=0, latch=1, accumulate=" +
           std::to_string(kk > 0 ? 1 : 0) + "\n";
    }
    s += "mxu.pop mxu=0, acc=0, m=" + std::to_string(m) +
         ", n=128, acc_dtype=f32, dst=" + std::to_string(12u << 20) + ", stride=128, dtype=bf16\n";
  }
  s += "ctrl.halt\n";
  auto p = isa::Assemble(s, "gemm.tasm");
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", p.status().message().c_str());
    std::abort();
  }
  return *p;
}

void BM_SimulateGemm(benchmark::State& state, MxuModelKind kind, int m, int k, int n, bool values) {
  const isa::Program p = GemmProgram(m, k, n);
  SimOptions o;
  o.mxu_model = kind;
  o.compute_values = values;
  const Simulator sim(BenchChip(), o);
  uint64_t cycles = 0, insts = 0;
  double util = 0;
  for (auto _ : state) {
    auto r = sim.Run(p);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    cycles += r->cycles.value();
    insts += r->instructions_executed;
    util = static_cast<double>(r->cores[0].useful_macs) /
           (128.0 * 128.0 * static_cast<double>(r->cycles.value()));
  }
  state.counters["sim_cycles_per_s"] =
      benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsRate);
  state.counters["instructions_per_s"] =
      benchmark::Counter(static_cast<double>(insts), benchmark::Counter::kIsRate);
  state.counters["mxu_utilization"] = util;
}

// Values on (the default: every MXU product computed) and timing only (--timing-only).
BENCHMARK_CAPTURE(BM_SimulateGemm, fast_512x1024x1024, MxuModelKind::kFast, 512, 1024, 1024, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateGemm, fast_timing_512x1024x1024, MxuModelKind::kFast, 512, 1024, 1024,
                  false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateGemm, fast_timing_1024x4096x4096, MxuModelKind::kFast, 1024, 4096,
                  4096, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateGemm, fast_128x256x256, MxuModelKind::kFast, 128, 256, 256, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateGemm, pe_128x256x256, MxuModelKind::kPe, 128, 256, 256, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateGemm, pe_timing_128x256x256, MxuModelKind::kPe, 128, 256, 256, false)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpusim::sim

BENCHMARK_MAIN();
