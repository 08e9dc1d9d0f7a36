// PlanDot (plan_dot.h): block choice, K split, buffers, row split and the step schedule of a dot.
#include "compiler/lower/plan_dot.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "compiler/lower/blocking.h"

namespace tpusim::compiler {

namespace {

// The MXU pipeline of a dot's output blocks on its busiest MXU, in cycles: block j's matmuls
// (k_tiles x units x FoldCycles(rows per unit)) start when block j-1's are done and when the pop of
// the block that last held their accumulator set (j - acc_sets) is done; its results are in the
// accumulators R + C - 2 cycles after its last row entered (isa::MxuTiming::DrainCycles); its pop
// (isa::MxuPopCycles of units x rows per unit, as the simulator's MXU unit) starts when those
// results are there and the previous pop is done. The blocks of one batch in schedule order
// (M block -> N block) repeat B times; past kMaxBlocks blocks the time is extrapolated linearly.
double PipelineCycles(const DotPlan& p, const config::ChipConfig& config, int64_t acc_sets) {
  constexpr int64_t kMaxBlocks = 4096;
  const DotShape& d = p.shape;
  const DotBlocks& bl = p.blocks;
  const int64_t R = p.mxu.rows, C = p.mxu.cols, nm = p.mxus;
  const double k_tiles =
      static_cast<double>(CeilDiv(d.K, R)) / static_cast<double>(p.ksplit);
  struct Block {
    double mm, pop;
  };
  std::vector<Block> batch;
  for (int64_t m0 = 0; m0 < d.M; m0 += bl.Mc) {
    for (int64_t n0 = 0; n0 < d.N; n0 += bl.Nc) {
      const int64_t mc = std::min(bl.Mc, d.M - m0), nc = std::min(bl.Nc, d.N - n0);
      const int64_t G = p.RowGroups(mc, nc);
      const int64_t units = p.ksplit > 1 ? 1 : CeilDiv(CeilDiv(nc, C) * G, nm);
      const int64_t rows = CeilDiv(mc, G);
      batch.push_back({k_tiles * static_cast<double>(units * p.mxu.FoldCycles(rows)),
                       static_cast<double>(
                           isa::MxuPopCycles(units * rows, config.core.mxu.pop_latency_cycles))});
    }
  }
  const int64_t total = d.B * static_cast<int64_t>(batch.size());
  const int64_t n = std::min(total, kMaxBlocks);
  std::vector<double> pop_end(static_cast<size_t>(n), 0.0);
  double mm_end = 0, last_pop = 0;
  for (int64_t j = 0; j < n; ++j) {
    const Block& b = batch[static_cast<size_t>(j) % batch.size()];
    const double start =
        std::max(mm_end, j >= acc_sets ? pop_end[static_cast<size_t>(j - acc_sets)] : 0.0);
    mm_end = start + b.mm;
    const double ready = mm_end + static_cast<double>(p.mxu.DrainCycles(C));
    last_pop = std::max(ready, last_pop) + b.pop;
    pop_end[static_cast<size_t>(j)] = last_pop;
  }
  return last_pop * static_cast<double>(total) / static_cast<double>(std::max<int64_t>(n, 1));
}

// The estimated time of a dot with blocks p.blocks (acc_sets accumulator sets) on one core, in
// cycles (PlanDot's estimate).
double EstimateCycles(const DotPlan& p, const config::ChipConfig& config, int64_t acc_sets) {
  const DotShape& d = p.shape;
  const int64_t Mc = p.blocks.Mc, Kc = p.blocks.Kc, Nc = p.blocks.Nc;
  const int64_t R = p.mxu.rows, C = p.mxu.cols;
  const double bw = std::max(1e-9, config.HbmBytesPerCycle());
  const int64_t mb = CeilDiv(d.M, Mc), nb = CeilDiv(d.N, Nc), kb = CeilDiv(d.K, Kc);
  const double lhs_reads = Kc == d.K ? 1.0 : static_cast<double>(nb);
  const double rhs_reads = (Kc == d.K && Nc == d.N) ? 1.0 : static_cast<double>(mb);
  const double traffic =
      static_cast<double>(d.B) * (lhs_reads * static_cast<double>(d.M * d.K * d.le) +
                                  rhs_reads * static_cast<double>(d.K * d.N * d.re) +
                                  static_cast<double>(d.M * d.N * d.oe));
  const double steps = static_cast<double>(d.B * mb * nb * kb);
  return std::max(PipelineCycles(p, config, acc_sets), traffic / bw) +
         steps * static_cast<double>(config.hbm.latency_cycles + R + C);
}

// The largest Kc (a multiple of R unless the whole K) for an Mc that fits `vmem` with nbuf result
// buffers, halving Mc (in whole sublane groups) until at least min(K, R) fits; Mc = 0 when none.
void FitKc(const DotPlan& p, int64_t vmem, int nbuf, int64_t* Mc, int64_t* Kc, int64_t Nc) {
  const DotShape& d = p.shape;
  const int64_t R = p.mxu.rows;
  const int64_t partial_bytes_per_row = p.ksplit > 1 ? p.ksplit * d.N * 4 : 0;
  *Kc = 0;
  while (*Mc >= 1) {
    const int64_t nin = DotInputBuffers(nbuf);
    const int64_t room =
        vmem - nbuf * *Mc * Nc * d.oe * d.out_copies - *Mc * partial_bytes_per_row;
    const int64_t per_k =
        nin * (*Mc * (d.le * d.lhs_copies + d.lhs_extra) + Nc * (d.re + d.rhs_extra));
    *Kc = room > 0 ? std::min(d.K, room / per_k) : 0;
    if (*Kc < d.K) *Kc = *Kc / R * R;
    if (p.ksplit > 1 && *Kc < d.K) *Kc = 0;
    if (*Kc >= std::min(d.K, R)) return;
    *Mc = *Mc > 8 ? *Mc / 2 / 8 * 8 : *Mc - 1;
  }
}

// The accumulator sets p's output blocks rotate through (DotPlan::acc_sets).
int AccumulatorSets(const DotPlan& p) {
  if (p.ksplit > 1) return 1;
  return static_cast<int>(
      std::clamp<int64_t>(p.acc_rows / std::max<int64_t>(1, p.AccSetRows()), 1,
                          kMaxAccumulatorSets));
}

// The blocks of `p` that minimize EstimateCycles; false when none fits.
bool ChooseDotBlocks(DotPlan& p, const config::ChipConfig& config, int64_t vmem, int nbuf_wanted) {
  const DotShape& d = p.shape;
  const int64_t C = p.mxu.cols, nm = p.mxus;
  const int64_t n_tiles = CeilDiv(d.N, C);
  const int64_t max_t = p.ksplit > 1 ? 1 : std::min<int64_t>(CeilDiv(n_tiles, nm), 4096);
  double best_cost = -1;
  for (int nbuf = nbuf_wanted; nbuf >= 1 && best_cost < 0; --nbuf) {
    for (int64_t t = 1; t <= max_t; ++t) {
      const int64_t Nc = p.ksplit > 1 ? d.N : std::min(d.N, t * nm * C);
      const int64_t tpm = p.ksplit > 1 ? 1 : CeilDiv(CeilDiv(Nc, C), nm);
      if (t > 1 && tpm < t) break;  // Nc already covers N
      for (const int64_t acc_sets : {int64_t{3}, int64_t{2}, int64_t{1}}) {
        int64_t Mc = std::min(d.M, p.acc_rows / (acc_sets * tpm));
        if (Mc < d.M && Mc > 8) Mc = Mc / 8 * 8;  // whole sublane groups
        int64_t Kc = 0;
        FitKc(p, vmem, nbuf, &Mc, &Kc, Nc);
        if (Mc < 1 || Kc < 1) continue;
        // Balance the M blocks (1792 rows as 2 x 896, not 1024 + 768): the short block's
        // matmuls would not hide the long block's pop, and its MXU would wait for the
        // accumulator rows.
        if (Mc < d.M) Mc = std::min(Mc, CeilDiv(CeilDiv(d.M, CeilDiv(d.M, Mc)), 8) * 8);
        // Balance the K chunks (no short last chunk whose compute cannot hide the next loads).
        const int64_t R = p.mxu.rows;
        if (Kc < d.K) Kc = std::min(Kc, CeilDiv(CeilDiv(d.K, CeilDiv(d.K, Kc)), R) * R);
        DotPlan candidate = p;
        candidate.blocks = DotBlocks{Mc, Kc, Nc, tpm, nbuf};
        const double cost = EstimateCycles(candidate, config, AccumulatorSets(candidate));
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          p.blocks = candidate.blocks;
        }
      }
    }
  }
  return best_cost >= 0;
}

}  // namespace

int DotInputBuffers(int nbuf) { return nbuf > 1 ? 3 : 1; }

StatusOr<DotPlan> PlanDot(const DotShape& shape, const config::ChipConfig& config, int64_t vmem,
                          bool double_buffer) {
  const config::MxuConfig& mxu = config.core.mxu;
  DotPlan p;
  p.shape = shape;
  p.mxu = isa::MxuTiming::FromConfig(mxu);
  p.mxus = std::max<int64_t>(1, mxu.count);
  p.acc_rows = PlannedAccumulatorRows(mxu);
  const int64_t R = mxu.rows, C = mxu.cols;
  p.ksplit = (shape.N <= C && p.mxus > 1 && shape.K * shape.N * shape.re <= vmem / 2)
                 ? std::min(p.mxus, CeilDiv(shape.K, R))
                 : 1;
  if (!ChooseDotBlocks(p, config, vmem, double_buffer ? 2 : 1)) {
    const int64_t k = std::min(shape.K, R), n = std::min(shape.N, C);
    return ResourceExhausted(fmt::format(
        "VMEM: a [1,{}] LHS block, a [{},{}] weight block and a [1,{}] result "
        "block need {} bytes, but only {} bytes of core.vmem.capacity_bytes = "
        "{} are free for the dot's blocks",
        k, k, n, n, k * shape.le + k * n * shape.re + n * shape.oe, std::max<int64_t>(0, vmem),
        config.core.vmem_bytes));
  }
  p.input_buffers = DotInputBuffers(p.blocks.nbuf);
  p.acc_sets = AccumulatorSets(p);
  return p;
}

int64_t DotPlan::AccSetRows() const {
  const DotShape& d = shape;
  const int64_t Mc = blocks.Mc, Nc = blocks.Nc;
  int64_t rows = 0;
  // The full block and the short last blocks in M and N (their row split may differ).
  for (const int64_t mc : {Mc, d.M % Mc == 0 ? Mc : d.M % Mc}) {
    for (const int64_t nc : {Nc, d.N % Nc == 0 ? Nc : d.N % Nc}) {
      const int64_t G = RowGroups(mc, nc);
      rows = std::max(rows, G == 1 ? blocks.tiles_per_mxu * Mc
                                   : CeilDiv(CeilDiv(nc, mxu.cols) * G, mxus) * CeilDiv(Mc, G));
    }
  }
  return rows;
}

int64_t DotPlan::RowGroups(int64_t mc, int64_t nc) const {
  const int64_t tiles = CeilDiv(nc, mxu.cols), nm = mxus;
  if (ksplit > 1 || tiles % nm == 0) return 1;
  const int64_t G = nm / std::gcd(tiles, nm);
  const auto busiest = [&](int64_t g) {
    return CeilDiv(tiles * g, nm) * mxu.FoldCycles(CeilDiv(mc, g));
  };
  if (busiest(G) >= busiest(1) ||
      CeilDiv(tiles * G, nm) * CeilDiv(blocks.Mc, G) > blocks.tiles_per_mxu * blocks.Mc) {
    return 1;
  }
  return G;
}

DotRowUnit DotPlan::RowUnit(int64_t j, int64_t g, int64_t G, int64_t mc) const {
  const int64_t nm = mxus, Mc = blocks.Mc;
  if (G == 1) return DotRowUnit{static_cast<uint64_t>(j % nm), (j / nm) * Mc, 0, mc};
  const int64_t q = j * G + g;
  return DotRowUnit{static_cast<uint64_t>(q % nm), (q / nm) * CeilDiv(Mc, G), g * mc / G,
                    (g + 1) * mc / G};
}

StatusOr<std::vector<DotStep>> DotSchedule(const DotPlan& plan, int64_t max_steps) {
  const DotShape& d = plan.shape;
  const DotBlocks& bl = plan.blocks;
  std::vector<DotStep> steps;
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t m0 = 0; m0 < d.M; m0 += bl.Mc) {
      for (int64_t n0 = 0; n0 < d.N; n0 += bl.Nc) {
        for (int64_t k0 = 0; k0 < d.K; k0 += bl.Kc) {
          DotStep st{b, m0, n0, k0, true, true, 0, 0};
          if (!steps.empty()) {
            const DotStep& p = steps.back();
            st.load_lhs = !(p.b == b && p.m0 == m0 && p.k0 == k0);
            st.load_rhs = !(p.b == b && p.n0 == n0 && p.k0 == k0);
            st.lhs_ver = p.lhs_ver + (st.load_lhs ? 1 : 0);
            st.rhs_ver = p.rhs_ver + (st.load_rhs ? 1 : 0);
          }
          steps.push_back(st);
          if (static_cast<int64_t>(steps.size()) > max_steps) {
            return ResourceExhausted("too many blocks");
          }
        }
      }
    }
  }
  return steps;
}

}  // namespace tpusim::compiler
