// dot on the MXUs, weight-stationary (DESIGN.md §4, §5).
//
// Input: a canonical dot (passes/canonicalize.h): lhs [B,M,K], rhs [B,K,N] ("KN") or [B,N,K] ("NK",
// loaded with load_weights transpose=1), result [B,M,N]; rank-2 forms without B.
//
// Tiling. The RHS is cut into weight tiles of at most R x C (core.mxu.rows x cols): K into R-row
// slices, N into C-column slices. The LHS streams through the stationary weights M rows at a time.
// HBM-level blocks (Mc, Kc, Nc) are chosen so a block's working set fits VMEM:
//   rhs block Kc x Nc (preferably the whole [K,N], so weights are read from HBM once per batch),
//   lhs block Mc x Kc (with Kc = K the LHS block stays in VMEM across all N blocks),
//   result block Mc x Nc,
// and so each MXU's accumulator holds the [Mc, C] partial sums of every N tile it owns:
//   Mc * ceil(ceil(Nc / C) / mxu.count) <= core.mxu.accumulator_rows.
// Loop order: batch -> M block -> N block -> K block -> K tile -> N tile (round-robin over the
// MXUs, tile j on MXU j % count) -> precision pass. Partial sums over K tiles and passes accumulate
// in the accumulators (accumulate=1 after the first); each N tile is popped once, after its last K
// tile. With Kc = K and Nc = N (the common case) HBM traffic is the minimum: every operand byte is
// read once per batch and every result byte written once.
//
// Precision: lower/mxu_passes.h.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "compiler/lower/lowerer.h"
#include "compiler/lower/mxu_passes.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using isa::PrecisionPart;

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Operand (LHS and weight) chunk buffers: three when double buffering, so the loads of step i + 1
// can be issued before step i's matmuls without waiting for step i - 1's matmuls (which read the
// buffer two steps back), and the MXU queues never run dry behind a prefetch.
int InputBuffers(int nbuf) { return nbuf > 1 ? 3 : 1; }

// A canonical dot's sizes: batch B, [M,K] x [K,N], element bytes of LHS, RHS and result.
struct DotShape {
  int64_t B, M, K, N, le, re, oe;
  int64_t lhs_copies = 1;  // 2 for a KM LHS: its blocks are staged before the XLU transposes them
  // VMEM bytes per element of an LHS / weight block that the operand's prologue adds (its inputs
  // and intermediates; lower/dot_prologue.cc), held like the block in every buffer version.
  int64_t lhs_extra = 0, rhs_extra = 0;
};

// HBM-level blocks: an LHS chunk [Mc, Kc], a weight chunk [Kc, Nc] and a result block [Mc, Nc],
// each held `nbuf` times in VMEM; every MXU owns tiles_per_mxu of the block's ceil(Nc / C) N tiles.
struct DotBlocks {
  int64_t Mc = 0, Kc = 0, Nc = 0, tiles_per_mxu = 1;
  int nbuf = 1;
};

// Chooses the blocks that minimize an estimate of the dot's time on one core:
//   max(MXU time, HBM traffic / HBM bytes per cycle) + steps * HBM latency,
// with MXU time = per MXU, for each weight tile it owns, max(Mc streamed rows, R * weight-load
// cycles per row) — a weight tile cannot be used for less than its shift time, which is what bounds
// a GEMV with tiny M (each MXU absorbs R * C * 2 bytes per R cycles) — and traffic = the LHS read
// once per N block (once when Kc = K) + the weights read once per M block (once when Kc = K and
// Nc = N) + the result written once. Candidates: Nc = t * mxu.count * C for t = 1, 2, ...; Mc as
// large as the accumulators allow with two accumulator sets (so popping a block overlaps the next
// block's matmuls), else one; Kc the largest multiple of R that fits VMEM. ResourceExhausted when
// not even [1, min(K, R)] x [min(K, R), min(N, C)] fits.
StatusOr<DotBlocks> ChooseDotBlocks(const hlo::HloInstruction& inst,
                                    const config::ChipConfig& config, const DotShape& d,
                                    int64_t vmem, int nbuf_wanted, int64_t ksplit) {
  const auto& mxu = config.core.mxu;
  const int64_t R = mxu.rows, C = mxu.cols, nm = std::max<int64_t>(1, mxu.count);
  const int64_t acc_rows = mxu.accumulator_rows > 0 ? mxu.accumulator_rows : (int64_t{1} << 20);
  const double bw = std::max(1e-9, config.HbmBytesPerCycle());
  const int64_t wl = std::max<int64_t>(1, mxu.weight_load_cycles_per_row);
  const int64_t n_tiles = CeilDiv(d.N, C);
  const int64_t max_t = ksplit > 1 ? 1 : std::min<int64_t>(CeilDiv(n_tiles, nm), 4096);
  DotBlocks best;
  double best_cost = -1;
  for (int nbuf = nbuf_wanted; nbuf >= 1 && best_cost < 0; --nbuf) {
    for (int64_t t = 1; t <= max_t; ++t) {
      const int64_t Nc = ksplit > 1 ? d.N : std::min(d.N, t * nm * C);
      const int64_t tpm = ksplit > 1 ? 1 : CeilDiv(CeilDiv(Nc, C), nm);
      if (t > 1 && tpm < t) break;  // Nc already covers N
      const int64_t partial_bytes_per_row = ksplit > 1 ? ksplit * d.N * 4 : 0;
      for (const int64_t acc_sets : {int64_t{2}, int64_t{1}}) {
        int64_t Mc = std::min(d.M, acc_rows / (acc_sets * tpm));
        if (Mc < d.M && Mc > 8) Mc = Mc / 8 * 8;  // whole sublane groups
        int64_t Kc = 0;
        while (Mc >= 1) {
          const int64_t nin = InputBuffers(nbuf);
          const int64_t room = vmem - nbuf * Mc * Nc * d.oe - Mc * partial_bytes_per_row;
          const int64_t per_k =
              nin * (Mc * (d.le * d.lhs_copies + d.lhs_extra) + Nc * (d.re + d.rhs_extra));
          Kc = room > 0 ? std::min(d.K, room / per_k) : 0;
          if (Kc < d.K) Kc = Kc / R * R;
          if (ksplit > 1 && Kc < d.K) Kc = 0;
          if (Kc >= std::min(d.K, R)) break;
          Mc = Mc > 8 ? Mc / 2 / 8 * 8 : Mc - 1;
        }
        if (Mc < 1 || Kc < 1) continue;
        // Balance the K chunks (no short last chunk whose compute cannot hide the next loads).
        if (Kc < d.K) Kc = std::min(Kc, CeilDiv(CeilDiv(d.K, CeilDiv(d.K, Kc)), R) * R);
        const int64_t mb = CeilDiv(d.M, Mc), nb = CeilDiv(d.N, Nc), kb = CeilDiv(d.K, Kc);
        const double lhs_reads = Kc == d.K ? 1.0 : static_cast<double>(nb);
        const double rhs_reads = (Kc == d.K && Nc == d.N) ? 1.0 : static_cast<double>(mb);
        const double traffic =
            static_cast<double>(d.B) * (lhs_reads * static_cast<double>(d.M * d.K * d.le) +
                                        rhs_reads * static_cast<double>(d.K * d.N * d.re) +
                                        static_cast<double>(d.M * d.N * d.oe));
        const double k_tiles = static_cast<double>(CeilDiv(d.K, R)) / static_cast<double>(ksplit);
        const double mxu_time = static_cast<double>(d.B * mb * nb) * k_tiles *
                                static_cast<double>(tpm * std::max(std::min(Mc, d.M), R * wl));
        const double steps = static_cast<double>(d.B * mb * nb * kb);
        // Popping a block is not hidden behind the next block's matmuls: measured on
        // gemm_bf16_8192 (tpu-v4), ~1.8 * Mc exposed cycles per owned tile and output block with
        // two accumulator sets and ~3.5 * Mc with one; the estimate uses 2 and 4.
        const double pops =
            static_cast<double>((acc_sets == 2 ? 2 : 4) * d.B * mb * nb * tpm * std::min(Mc, d.M));
        const double cost = std::max(mxu_time, traffic / bw) + pops +
                            steps * static_cast<double>(config.hbm.latency_cycles + R + C);
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          best = DotBlocks{Mc, Kc, Nc, tpm, nbuf};
        }
      }
    }
  }
  if (best_cost < 0) {
    const int64_t k = std::min(d.K, R), n = std::min(d.N, C);
    return DoesNotFit(
        inst, fmt::format("VMEM: a [1,{}] LHS block, a [{},{}] weight block and a [1,{}] result "
                          "block need {} bytes, but only {} bytes of core.vmem.capacity_bytes = "
                          "{} are free for the dot's blocks",
                          k, k, n, n, k * d.le + k * n * d.re + n * d.oe,
                          std::max<int64_t>(0, vmem), config.core.vmem_bytes));
  }
  return best;
}

}  // namespace

namespace {

// The scalar value of a constant (or a broadcast of one); nullopt otherwise.
std::optional<double> ScalarConstant(const HloInstruction* x) {
  if (x->opcode() == hlo::HloOpcode::kBroadcast) x = x->operand(0);
  if (x->opcode() != hlo::HloOpcode::kConstant || x->shape().ElementCount() != 1) {
    return std::nullopt;
  }
  const hlo::LiteralValues& v = x->literal();
  if (v.elided) return std::nullopt;
  if (!v.float_values.empty()) return v.float_values[0];
  if (!v.int_values.empty()) return static_cast<double>(v.int_values[0]);
  return std::nullopt;
}

bool OnlyUser(const HloInstruction* x, const HloInstruction* user) {
  return x->users().size() == 1 && x->users()[0] == user && x != x->parent()->root_instruction();
}

}  // namespace

std::optional<Lowerer::PopActivation> Lowerer::FoldPopActivation(
    const HloInstruction& dot, const std::vector<const HloInstruction*>& ops) const {
  if (ops.empty() || ops.size() > 2 || !OnlyUser(&dot, ops[0])) return std::nullopt;
  const HloInstruction* a = ops[0];
  const isa::DType rt = Buffer(&dot).dtype;
  const bool int_result = rt == isa::DType::kS32;
  PopActivation pa;
  const auto zero = [](const HloInstruction* x) {
    const auto v = ScalarConstant(x);
    return v && *v == 0.0;
  };
  switch (a->opcode()) {
    case hlo::HloOpcode::kMaximum:
      if (!((a->operand(0) == &dot && zero(a->operand(1))) ||
            (a->operand(1) == &dot && zero(a->operand(0))))) {
        return std::nullopt;
      }
      pa.act = isa::Activation::kRelu;
      break;
    case hlo::HloOpcode::kClamp: {
      const auto hi = ScalarConstant(a->operand(2));
      if (!int_result || a->operand(1) != &dot || !zero(a->operand(0)) || !hi || *hi != 127.0 ||
          ops.size() != 2) {
        return std::nullopt;
      }
      pa.act = isa::Activation::kRelu;
      break;
    }
    case hlo::HloOpcode::kTanh:
    case hlo::HloOpcode::kLogistic:
      if (int_result || a->operand(0) != &dot) return std::nullopt;
      pa.act = a->opcode() == hlo::HloOpcode::kTanh ? isa::Activation::kTanh
                                                    : isa::Activation::kLogistic;
      break;
    default:
      return std::nullopt;
  }
  if (Buffer(a).dtype != rt) return std::nullopt;
  pa.dtype = rt;
  pa.last = a;
  if (ops.size() == 2) {
    const HloInstruction* c = ops[1];
    const isa::DType ct = Buffer(c).dtype;
    const bool requant = int_result && ct == isa::DType::kS8;
    const bool narrow = rt == isa::DType::kF32 && ct == isa::DType::kBF16;
    if (c->opcode() != hlo::HloOpcode::kConvert || c->operand(0) != a || !OnlyUser(a, c) ||
        !(requant || narrow)) {
      return std::nullopt;
    }
    // clamp(0, x, 127) -> s8 equals relu with the pop's saturation; maximum(x, 0) -> s8 wraps
    // above 127 in XLA's convert, which the pop's saturation does not reproduce.
    if (requant && a->opcode() != hlo::HloOpcode::kClamp) return std::nullopt;
    pa.dtype = ct;
    pa.last = c;
  }
  return pa;
}

Status Lowerer::LowerDot(const HloInstruction& inst) {
  const auto& dn = inst.dot_dimension_numbers();
  const HbmBuffer& L = Buffer(inst.operand(0));
  const HbmBuffer& Rb = Buffer(inst.operand(1));
  const HbmBuffer& D = Buffer(&inst);
  const bool batched = !dn.lhs_batch_dimensions.empty();
  const size_t rank = batched ? 3 : 2;
  if (L.dims.size() != rank || Rb.dims.size() != rank ||
      dn.rhs_contracting_dimensions.size() != 1 || dn.lhs_contracting_dimensions.size() != 1) {
    return Internal("dot %" + inst.name() + " is not in canonical form (run canonicalize first)");
  }
  // KM: the LHS is [B,K,M]; its blocks are loaded as [kc, mc] and transposed on the XLU.
  const bool km = dn.lhs_contracting_dimensions[0] == static_cast<int64_t>(rank) - 2;
  const bool nk = dn.rhs_contracting_dimensions[0] == static_cast<int64_t>(rank) - 1;
  const int64_t B = batched ? L.dims[0] : 1;
  const int64_t M = km ? L.dims[rank - 1] : L.dims[rank - 2];
  const int64_t K = km ? L.dims[rank - 2] : L.dims[rank - 1];
  // Megacore: this core computes result columns [n_lo, n_lo + N) of the N_all.
  const int64_t N_all = nk ? Rb.dims[rank - 2] : Rb.dims[rank - 1];
  const ColumnShare share = DotColumnShare(N_all);
  if (megacore_.rank > 0 && share.parts == 1) return OkStatus();
  const int64_t n_lo = share.begin;
  const int64_t N = share.end - share.begin;

  using isa::DType;
  const auto is_float = [](DType t) { return t == DType::kF32 || t == DType::kBF16; };
  bool int_path = false;
  if (L.dtype == DType::kS8 && Rb.dtype == DType::kS8 && D.dtype == DType::kS32) {
    int_path = true;
  } else if (!(is_float(L.dtype) && is_float(Rb.dtype) && is_float(D.dtype))) {
    return Unsupported(inst,
                       fmt::format("dot of {} x {} -> {} (the MXU takes f32/bf16 operands "
                                   "with f32/bf16 results, or s8 x s8 -> s32)",
                                   isa::Name(L.dtype), isa::Name(Rb.dtype), isa::Name(D.dtype)));
  }
  if (!int_path && !config_.core.mxu.bf16) {
    return Unsupported(
        inst, fmt::format("a {} x {} dot on '{}', whose MXU has no floating-point path "
                          "(core.mxu.bf16: false; TPU v1 multiplies 8-bit integers [Jouppi "
                          "et al., ISCA 2017, §2]): quantize the dot to s8 x s8 -> s32",
                          isa::Name(L.dtype), isa::Name(Rb.dtype), config_.name));
  }
  const hlo::Precision prec = std::max(inst.operand_precision(0), inst.operand_precision(1));
  const std::vector<PassParts> passes =
      int_path ? std::vector<PassParts>{{PrecisionPart::kHi, PrecisionPart::kHi}}
               : PrecisionPasses(prec, L.dtype == DType::kF32, Rb.dtype == DType::kF32);
  if (K == 0 && M > 0 && N_all > 0) {
    return Unsupported(inst, "dot with an empty contracting dimension");
  }
  if (share.parts > 1) MegacoreBarrier();  // the operands are in HBM
  if (M == 0 || N == 0 || K == 0) {
    if (share.parts > 1) MegacoreBarrier();
    return OkStatus();
  }

  const auto& mxu = config_.core.mxu;
  const int64_t R = mxu.rows, C = mxu.cols, nm = std::max<int64_t>(1, mxu.count);
  const int64_t acc_rows = mxu.accumulator_rows > 0 ? mxu.accumulator_rows : (int64_t{1} << 20);
  // Pop-time fusion (fusion.h, AddDotEpilogues): a third of VMEM is kept for the epilogue's
  // operand and result blocks.
  const std::vector<const HloInstruction*>* epilogue_ops = nullptr;
  if (auto it = groups_.epilogue_of_dot.find(&inst);
      it != groups_.epilogue_of_dot.end() && share.parts == 1 && megacore_.rank == 0) {
    epilogue_ops = &it->second;
  }
  // TPU v1's Activate: an activation-only epilogue runs in the pops (FoldPopActivation), which
  // then store straight into the activation's buffer. Not with a K split, whose pops are partials.
  std::optional<PopActivation> pop_act;
  if (epilogue_ops != nullptr && (nm == 1 || N > C)) {
    pop_act = FoldPopActivation(inst, *epilogue_ops);
    if (pop_act) epilogue_ops = nullptr;
  }
  const HbmBuffer& O = pop_act ? Buffer(pop_act->last) : D;
  const int64_t le = L.elem_bytes(), re = Rb.elem_bytes(), oe = O.elem_bytes();
  int64_t V = (em_.vmem_free() - 3 * 64) * (epilogue_ops != nullptr ? 2 : 3) / 3;

  // Operand fusion (fusion.h, AddDotPrologues): the producers of the LHS [M,K] (index 0) and of
  // the weights [K,N] (index 1) run on each block as it is loaded. Their blocks count in the block
  // choice; their row/column vectors are reserved at full length. When they do not fit, the ops
  // get kernels of their own (LowerPrologueKernels) and the dot is lowered again without them.
  const std::vector<const HloInstruction*>* pro_ops[2] = {nullptr, nullptr};
  int64_t pro_extra[2] = {0, 0};
  if (prologue_disabled_.count(&inst) == 0 && share.parts == 1) {
    for (int idx = 0; idx < 2; ++idx) {
      auto it = groups_.prologue_of_dot.find({&inst, idx});
      if (it == groups_.prologue_of_dot.end()) continue;
      pro_ops[idx] = &it->second;
      const PrologueFootprint f = MeasurePrologue(it->second);
      const int64_t longest = idx == 1 ? std::max(K, N_all) : std::max(M, K);
      V -=
          InputBuffers(2) * (f.vectors * longest * f.vector_bytes_per_element + f.allocations * 64);
      pro_extra[idx] = f.per_element;
    }
  }
  const bool fused_operands = pro_ops[0] != nullptr || pro_ops[1] != nullptr;
  if (fused_operands && V <= 0) {
    TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
    return LowerDot(inst);
  }

  // K split: when the whole N fits one array's columns (N <= C) but the core has several MXUs,
  // K tile t goes to MXU t % ksplit, each MXU accumulates its own partial sum, and the partials are
  // popped (f32/s32) and added on the VPU — otherwise all but one MXU would idle.
  const int64_t ksplit =
      (N <= C && nm > 1 && K * N * re <= V / 2) ? std::min(nm, CeilDiv(K, R)) : 1;
  StatusOr<DotBlocks> chosen = ChooseDotBlocks(
      inst, config_, DotShape{B, M, K, N, le, re, oe, km ? 2 : 1, pro_extra[0], pro_extra[1]}, V,
      double_buffer_ ? 2 : 1, ksplit);
  if (!chosen.ok() && fused_operands) {
    TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
    return LowerDot(inst);
  }
  TPUSIM_ASSIGN_OR_RETURN(const DotBlocks bl, std::move(chosen));
  const int64_t Kc = bl.Kc, Nc = bl.Nc, Mc = bl.Mc, tpm = bl.tiles_per_mxu;
  const int nbuf = bl.nbuf;
  const int nin = InputBuffers(nbuf);
  TPUSIM_ASSIGN_OR_RETURN(uint64_t lhs_v0, Vmem(inst, nin * Mc * Kc * le, "LHS blocks"));
  uint64_t stage_v0 = 0;  // KM: [kc, mc] blocks as loaded, before the XLU transpose
  if (km) {
    TPUSIM_ASSIGN_OR_RETURN(stage_v0, Vmem(inst, nin * Mc * Kc * le, "LHS staging"));
  }
  TPUSIM_ASSIGN_OR_RETURN(uint64_t rhs_v0, Vmem(inst, nin * Kc * Nc * re, "weight blocks"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t out_v0, Vmem(inst, nbuf * Mc * Nc * oe, "result blocks"));
  uint64_t partials = 0;  // ksplit x [Mc, N] partial sums (4-byte accumulator words)
  if (ksplit > 1) {
    TPUSIM_ASSIGN_OR_RETURN(partials, Vmem(inst, ksplit * Mc * N * 4, "K-split partial sums"));
  }
  std::optional<Prologue> pro[2];
  for (int idx = 0; idx < 2; ++idx) {
    if (pro_ops[idx] == nullptr) continue;
    pro[idx] = idx == 1 ? PlanPrologue(*pro_ops[idx], Kc, Nc, nin)
                        : PlanPrologue(*pro_ops[idx], Mc, Kc, nin);
    if (!pro[idx]) {
      TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
      return LowerDot(inst);
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(std::optional<Epilogue> epi,
                          epilogue_ops != nullptr
                              ? PlanEpilogue(inst, *epilogue_ops, Mc, Nc)
                              : StatusOr<std::optional<Epilogue>>(std::nullopt));
  const auto lhs_buf = [&](int64_t v) {
    return lhs_v0 + static_cast<uint64_t>((v % nin) * Mc * Kc * le);
  };
  const auto rhs_buf = [&](int64_t v) {
    return rhs_v0 + static_cast<uint64_t>((v % nin) * Kc * Nc * re);
  };
  const auto out_buf = [&](int64_t v) {
    return out_v0 + static_cast<uint64_t>((v % nbuf) * Mc * Nc * oe);
  };

  // The steps of the schedule, in loop order batch -> M block -> N block -> K chunk. Each step
  // needs an LHS chunk [mc, kc] and a weight chunk [kc, nc]; a chunk is reloaded only when it
  // differs from the previous step's (with Kc = K the LHS block stays across N blocks; with also
  // Nc = N the weights stay across M blocks). Versions count reloads; version v lives in buffer
  // v % nin.
  struct Step {
    int64_t b, m0, n0, k0;
    bool load_lhs, load_rhs;
    int64_t lhs_ver, rhs_ver;
  };
  std::vector<Step> steps;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t m0 = 0; m0 < M; m0 += Mc) {
      for (int64_t n0 = 0; n0 < N; n0 += Nc) {
        for (int64_t k0 = 0; k0 < K; k0 += Kc) {
          Step st{b, m0, n0, k0, true, true, 0, 0};
          if (!steps.empty()) {
            const Step& p = steps.back();
            st.load_lhs = !(p.b == b && p.m0 == m0 && p.k0 == k0);
            st.load_rhs = !(p.b == b && p.n0 == n0 && p.k0 == k0);
            st.lhs_ver = p.lhs_ver + (st.load_lhs ? 1 : 0);
            st.rhs_ver = p.rhs_ver + (st.load_rhs ? 1 : 0);
          }
          steps.push_back(st);
          if (static_cast<int64_t>(steps.size()) > kMaxInstructionsPerCore) {
            return ResourceExhausted("dot %" + inst.name() + ": too many blocks");
          }
        }
      }
    }
  }

  // Loads (HBM -> VMEM) of step i's chunks that are not already in VMEM, signalling kDotLoadFlag.
  constexpr uint64_t kDotLoadFlag = 2, kOutFlag0 = 4;
  auto issue_loads = [&](const Step& st) -> StatusOr<int64_t> {
    const int64_t mc = std::min(Mc, M - st.m0), kc = std::min(Kc, K - st.k0);
    const int64_t nc = std::min(Nc, N - st.n0);
    int64_t n = 0;
    if (st.load_lhs && km) {
      const std::vector<int64_t> dims{kc, mc}, ss{M * le, le}, ds{mc * le, le};
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d,
          em_.Dma(isa::Opcode::kDmaHbmToVmem,
                  L.address + static_cast<uint64_t>(((st.b * K + st.k0) * M + st.m0) * le), ss,
                  stage_v0 + static_cast<uint64_t>((st.lhs_ver % nin) * Mc * Kc * le), ds, dims, le,
                  kDotLoadFlag));
      n += d;
    } else if (st.load_lhs && pro[0]) {
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d,
          LoadPrologueBlock(*pro[0], st.lhs_ver % nin,
                            OperandBlock{st.b, M, K, st.m0, mc, st.k0, kc}, kDotLoadFlag));
      n += d;
    } else if (st.load_lhs) {
      const std::vector<int64_t> dims{mc, kc}, ss{K * le, le}, ds{kc * le, le};
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d,
          em_.Dma(isa::Opcode::kDmaHbmToVmem,
                  L.address + static_cast<uint64_t>(((st.b * M + st.m0) * K + st.k0) * le), ss,
                  lhs_buf(st.lhs_ver), ds, dims, le, kDotLoadFlag));
      n += d;
    }
    if (st.load_rhs && pro[1]) {
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d, LoadPrologueBlock(*pro[1], st.rhs_ver % nin,
                                       OperandBlock{st.b, K, N_all, st.k0, kc, n_lo + st.n0, nc},
                                       kDotLoadFlag));
      n += d;
    } else if (st.load_rhs) {
      const uint64_t src =
          Rb.address + static_cast<uint64_t>((nk ? (st.b * N_all + n_lo + st.n0) * K + st.k0
                                                 : (st.b * K + st.k0) * N_all + n_lo + st.n0) *
                                             re);
      const std::vector<int64_t> dims =
          nk ? std::vector<int64_t>{nc, kc} : std::vector<int64_t>{kc, nc};
      const std::vector<int64_t> ss{(nk ? K : N_all) * re, re};
      const std::vector<int64_t> ds{dims[1] * re, re};
      TPUSIM_ASSIGN_OR_RETURN(int64_t d, em_.Dma(isa::Opcode::kDmaHbmToVmem, src, ss,
                                                 rhs_buf(st.rhs_ver), ds, dims, re, kDotLoadFlag));
      n += d;
    }
    return n;
  };

  // Row split (as in the convolution kernel): when a block's N tiles do not divide evenly over the
  // MXUs (3 tiles on 2 MXUs), each tile's rows are cut into G contiguous groups and the (tile,
  // group) units go round-robin over the MXUs, so each streams about the same number of rows —
  // at the price of G times the weight loads. G is chosen when it lowers the estimated time of the
  // busiest MXU, units x max(rows per unit, R x weight-load cycles per row), and the units fit the
  // accumulator rows the block was given.
  const int64_t wl = std::max<int64_t>(1, mxu.weight_load_cycles_per_row);
  const auto row_groups = [&](int64_t mc, int64_t nc) -> int64_t {
    const int64_t tiles = CeilDiv(nc, C);
    if (ksplit > 1 || tiles % nm == 0) return 1;
    const int64_t G = nm / std::gcd(tiles, nm);
    const auto busiest = [&](int64_t g) {
      return CeilDiv(tiles * g, nm) * std::max(CeilDiv(mc, g), R * wl);
    };
    if (busiest(G) >= busiest(1) || CeilDiv(tiles * G, nm) * CeilDiv(Mc, G) > tpm * Mc) return 1;
    return G;
  };
  // Unit (tile j, group g of G) of an [mc, ..] block: its MXU, accumulator offset and rows.
  struct RowUnit {
    uint64_t mxu;
    int64_t acc, r0, r1;
  };
  const auto row_unit = [&](int64_t j, int64_t g, int64_t G, int64_t mc) {
    if (G == 1) return RowUnit{static_cast<uint64_t>(j % nm), (j / nm) * Mc, 0, mc};
    const int64_t q = j * G + g;
    return RowUnit{static_cast<uint64_t>(q % nm), (q / nm) * CeilDiv(Mc, G), g * mc / G,
                   (g + 1) * mc / G};
  };

  // Accumulators: with room for two [Mc, tiles_per_mxu * C] sets per MXU, consecutive output
  // blocks alternate between them, so the next block's matmuls run while the previous block is
  // popped.
  const bool double_acc = ksplit == 1 && 2 * Mc * tpm <= acc_rows;
  const DType acc_dtype = int_path ? DType::kS32 : DType::kF32;
  int64_t store_count[2] = {0, 0};  // descriptors of the store in flight from result buffer o
  struct PendingPop {
    bool valid = false;
    int64_t b = 0, m0 = 0, n0 = 0, acc0 = 0, block = 0;
  };
  PendingPop pending_pop, pending_store;
  // Pops output block `pp` into result buffer pp.block % nbuf (once its previous store is done) and
  // stores it to HBM.
  auto pop = [&](const PendingPop& pp) -> Status {
    const int64_t mc = std::min(Mc, M - pp.m0), nc = std::min(Nc, N - pp.n0);
    const int o = static_cast<int>(pp.block % nbuf);
    const uint64_t out = out_buf(pp.block);
    em_.Wait(kOutFlag0 + static_cast<uint64_t>(o), store_count[o]);
    store_count[o] = 0;
    if (ksplit > 1) {
      // Pop each MXU's partial [mc, nc] sums, add them in MXU order, convert to the result type.
      const int64_t words = mc * nc;
      for (int64_t q = 0; q < ksplit; ++q) {
        em_.Emit(isa::op::MxuPop{.mxu = static_cast<uint64_t>(q),
                                 .acc = 0,
                                 .m = static_cast<uint64_t>(mc),
                                 .n = static_cast<uint64_t>(nc),
                                 .acc_dtype = acc_dtype,
                                 .dst = partials + static_cast<uint64_t>(q * Mc * N * 4),
                                 .stride = static_cast<uint64_t>(nc),
                                 .dtype = acc_dtype,
                                 .act = isa::Activation::kNone});
      }
      for (int64_t q = 1; q < ksplit; ++q) {
        const bool last = q == ksplit - 1 && O.dtype == acc_dtype;
        em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kAdd,
                                    .dtype = acc_dtype,
                                    .dst = last ? out : partials,
                                    .a = partials,
                                    .b = partials + static_cast<uint64_t>(q * Mc * N * 4),
                                    .rows = 1,
                                    .cols = static_cast<uint64_t>(words)});
      }
      if (O.dtype != acc_dtype) {
        em_.Emit(isa::op::VpuConvert{.src_dtype = acc_dtype,
                                     .dtype = O.dtype,
                                     .dst = out,
                                     .src = partials,
                                     .count = static_cast<uint64_t>(words)});
      }
    } else {
      const int64_t G = row_groups(mc, nc);
      for (int64_t nt = 0; nt < nc; nt += C) {
        for (int64_t g = 0; g < G; ++g) {
          const RowUnit u = row_unit(nt / C, g, G, mc);
          em_.Emit(isa::op::MxuPop{.mxu = u.mxu,
                                   .acc = static_cast<uint64_t>(pp.acc0 + u.acc),
                                   .m = static_cast<uint64_t>(u.r1 - u.r0),
                                   .n = static_cast<uint64_t>(std::min(C, nc - nt)),
                                   .acc_dtype = acc_dtype,
                                   .dst = out + static_cast<uint64_t>((u.r0 * nc + nt) * oe),
                                   .stride = static_cast<uint64_t>(nc),
                                   .dtype = O.dtype,
                                   .act = pop_act ? pop_act->act : isa::Activation::kNone});
        }
      }
    }
    return OkStatus();
  };
  // Stores the popped block `pp` (VMEM -> HBM). Issued one step after its pops, so the sequencer
  // does not wait for the pops (behind the MXUs' queued matmuls) before issuing the next matmuls.
  auto store = [&](const PendingPop& pp) -> Status {
    const int64_t mc = std::min(Mc, M - pp.m0), nc = std::min(Nc, N - pp.n0);
    const int o = static_cast<int>(pp.block % nbuf);
    const uint64_t out = out_buf(pp.block);
    if (epi) {
      TPUSIM_RETURN_IF_ERROR(
          RunEpilogue(inst, *epi, out, O.dtype, pp.b, M, pp.m0, mc, n_lo + pp.n0, nc, N_all));
      if (!epi->store_dot) {
        store_count[o] = 0;
        return em_.CheckSize();
      }
    }
    const std::vector<int64_t> dims{mc, nc}, ss{nc * oe, oe}, ds{N_all * oe, oe};
    TPUSIM_ASSIGN_OR_RETURN(
        store_count[o],
        em_.Dma(isa::Opcode::kDmaVmemToHbm, out, ss,
                O.address + static_cast<uint64_t>(((pp.b * M + pp.m0) * N_all + n_lo + pp.n0) * oe),
                ds, dims, oe, kOutFlag0 + static_cast<uint64_t>(o)));
    if (nbuf == 1) {
      em_.Wait(kOutFlag0, store_count[0]);
      store_count[0] = 0;
    }
    return em_.CheckSize();
  };

  // Software pipeline: step i waits for its chunks, prefetches step i + 1's chunks into the next
  // of three buffers (so the HBM transfer overlaps all of step i's matmuls and the WAR wait is on
  // step i - 2, long done; with one buffer the prefetch goes after the matmuls instead), issues its
  // matmuls, stores the block popped one step earlier, then pops the previous output block (its
  // matmuls are done by the time step i's start, and step i's matmuls use the other accumulator
  // set).
  TPUSIM_ASSIGN_OR_RETURN(int64_t loads_pending, issue_loads(steps[0]));
  int64_t out_block = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    const int64_t mc = std::min(Mc, M - st.m0), kc = std::min(Kc, K - st.k0);
    const int64_t nc = std::min(Nc, N - st.n0);
    em_.Wait(kDotLoadFlag, loads_pending);
    loads_pending = 0;
    const uint64_t lhs = lhs_buf(st.lhs_ver), rhs = rhs_buf(st.rhs_ver);
    if (km && st.load_lhs) {
      em_.Emit(isa::op::XluTranspose{
          .dtype = L.dtype,
          .dst = lhs,
          .src = stage_v0 + static_cast<uint64_t>((st.lhs_ver % nin) * Mc * Kc * le),
          .rows = static_cast<uint64_t>(kc),
          .cols = static_cast<uint64_t>(mc)});
    }
    if (st.load_lhs && pro[0]) RunPrologueBlock(*pro[0], st.lhs_ver % nin, mc, kc, lhs);
    if (st.load_rhs && pro[1]) RunPrologueBlock(*pro[1], st.rhs_ver % nin, kc, nc, rhs);
    if (i + 1 < steps.size() && nin > 1) {
      TPUSIM_ASSIGN_OR_RETURN(loads_pending, issue_loads(steps[i + 1]));
    }
    const int64_t acc0 = double_acc ? (out_block % 2) * Mc * tpm : 0;
    const int64_t G = row_groups(mc, nc);
    for (int64_t kt = 0; kt < kc; kt += R) {
      const int64_t kk = std::min(R, kc - kt);
      for (int64_t nt = 0; nt < nc; nt += C) {
        const int64_t nn = std::min(C, nc - nt);
        const int64_t j = nt / C;
        const int64_t t = kt / R;  // K tile index within the block
        const bool first = ksplit > 1 ? t < ksplit : (st.k0 == 0 && kt == 0);
        for (int64_t g = 0; g < G; ++g) {
          const RowUnit u = row_unit(j, g, G, mc);
          const uint64_t unit = ksplit > 1 ? static_cast<uint64_t>(t % ksplit) : u.mxu;
          const uint64_t acc = static_cast<uint64_t>(ksplit > 1 ? 0 : acc0 + u.acc);
          for (size_t p = 0; p < passes.size(); ++p) {
            em_.Emit(isa::op::MxuLoadWeights{
                .mxu = unit,
                .addr = rhs + static_cast<uint64_t>((nk ? nt * kc + kt : kt * nc + nt) * re),
                .k = static_cast<uint64_t>(kk),
                .n = static_cast<uint64_t>(nn),
                .stride = static_cast<uint64_t>(nk ? kc : nc),
                .dtype = Rb.dtype,
                .transpose = nk,
                .part = passes[p].rhs});
            em_.Emit(isa::op::MxuMatmul{.mxu = unit,
                                        .lhs = lhs + static_cast<uint64_t>((u.r0 * kc + kt) * le),
                                        .stride = static_cast<uint64_t>(kc),
                                        .m = static_cast<uint64_t>(u.r1 - u.r0),
                                        .k = static_cast<uint64_t>(kk),
                                        .n = static_cast<uint64_t>(nn),
                                        .dtype = L.dtype,
                                        .part = passes[p].lhs,
                                        .acc = acc,
                                        .accumulate = !(first && p == 0),
                                        .latch = true});
          }
        }
      }
    }
    if (i + 1 < steps.size() && nin == 1) {
      TPUSIM_ASSIGN_OR_RETURN(loads_pending, issue_loads(steps[i + 1]));
    }
    if (pending_store.valid) {
      TPUSIM_RETURN_IF_ERROR(store(pending_store));
      pending_store.valid = false;
    }
    const bool last_k = st.k0 + Kc >= K;
    if (pending_pop.valid && (double_acc || last_k)) {
      TPUSIM_RETURN_IF_ERROR(pop(pending_pop));
      pending_store = pending_pop;
      pending_pop.valid = false;
    }
    if (last_k) {
      pending_pop = PendingPop{true, st.b, st.m0, st.n0, acc0, out_block++};
      if (!double_acc) {
        TPUSIM_RETURN_IF_ERROR(pop(pending_pop));
        TPUSIM_RETURN_IF_ERROR(store(pending_pop));
        pending_pop.valid = false;
      }
    }
    TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
  }
  if (pending_store.valid) TPUSIM_RETURN_IF_ERROR(store(pending_store));
  if (pending_pop.valid) {
    TPUSIM_RETURN_IF_ERROR(pop(pending_pop));
    TPUSIM_RETURN_IF_ERROR(store(pending_pop));
  }
  em_.Wait(kOutFlag0, store_count[0]);
  em_.Wait(kOutFlag0 + 1, store_count[1]);
  TPUSIM_RETURN_IF_ERROR(CloseEpilogue(inst, pop_act.has_value(), epi ? &*epi : nullptr));
  if (share.parts > 1) MegacoreBarrier();  // every share of the result is in HBM
  return OkStatus();
}

StatusOr<std::optional<Lowerer::Epilogue>> Lowerer::PlanEpilogue(
    const HloInstruction& dot, const std::vector<const HloInstruction*>& ops, int64_t Mc,
    int64_t Nc) {
  Epilogue ep;
  ep.ops = ops;
  auto member_index = [&](const HloInstruction* i) -> int64_t {
    auto it = std::find(ops.begin(), ops.end(), i);
    return it == ops.end() ? -1 : static_cast<int64_t>(it - ops.begin());
  };
  std::map<std::pair<uint64_t, isa::Broadcast>, size_t> ext_index;
  bool needs_tmp = false, needs_zero = false, select_scratch = false;
  ep.source.resize(ops.size());
  for (size_t m = 0; m < ops.size(); ++m) {
    const HloInstruction& op_inst = *ops[m];
    needs_tmp = needs_tmp || op_inst.opcode() == hlo::HloOpcode::kClamp ||
                op_inst.opcode() == hlo::HloOpcode::kIsFinite;
    needs_zero = needs_zero || op_inst.opcode() == hlo::HloOpcode::kIsFinite;
    for (const HloInstruction* op : op_inst.operands()) {
      if (op == &dot || (Buffer(op).address == Buffer(&dot).address &&
                         op->shape().dimensions() == dot.shape().dimensions())) {
        ep.source[m].push_back(kEpilogueDotBlock);  // the dot or a view of it
        continue;
      }
      if (const int64_t mi = member_index(op); mi >= 0) {
        ep.source[m].push_back(mi);
        continue;
      }
      const HbmBuffer& b = Buffer(op);
      isa::Broadcast mode = VirtualBroadcastKind(*op);
      if (mode == isa::Broadcast::kNone && b.elements() == 1) mode = isa::Broadcast::kScalar;
      select_scratch = select_scratch || (mode != isa::Broadcast::kNone &&
                                          op_inst.opcode() == hlo::HloOpcode::kSelect);
      auto [it, inserted] = ext_index.try_emplace({b.address, mode}, ep.ext.size());
      if (inserted) ep.ext.push_back({&b, mode, 0});
      ep.source[m].push_back(-2 - static_cast<int64_t>(it->second));
    }
  }
  // Allocations; an epilogue that does not fit is left to the ops' own kernels.
  auto alloc = [&](int64_t bytes, uint64_t* at) {
    const int64_t a = em_.AllocVmem(std::max<int64_t>(bytes, 64));
    if (a < 0) return false;
    *at = static_cast<uint64_t>(a);
    return true;
  };
  for (Epilogue::External& x : ep.ext) {
    const int64_t e = x.buf->elem_bytes();
    const int64_t elems = x.mode == isa::Broadcast::kScalar ? 1
                          : x.mode == isa::Broadcast::kRow  ? Nc
                          : x.mode == isa::Broadcast::kCol  ? Mc
                                                            : Mc * Nc;
    if (!alloc(elems * e, &x.vmem)) return std::optional<Epilogue>();
  }
  ep.result.resize(ops.size());
  for (size_t m = 0; m < ops.size(); ++m) {
    if (ops[m]->opcode() == hlo::HloOpcode::kReduce) {
      // Reductions keep a running result ([N] columns or [Mc] rows) and a block's partial.
      Epilogue::Reduction r;
      const auto& dims = ops[m]->dimensions();
      r.column = std::find(dims.begin(), dims.end(), dot.shape().rank() - 1) == dims.end();
      r.op = ReducerOp(*ops[m]).value_or(isa::ReduceOp::kSum);
      const int64_t n = r.column ? ops[m]->shape().ElementCount() : Mc;
      if (!alloc(n * 4, &r.running) || !alloc((r.column ? Nc : Mc) * 4, &r.partial)) {
        return std::optional<Epilogue>();
      }
      ep.reductions[m] = r;
      continue;
    }
    if (!alloc(Mc * Nc * Buffer(ops[m]).elem_bytes(), &ep.result[m])) {
      return std::optional<Epilogue>();
    }
  }
  const int64_t tmp_bytes = select_scratch ? kSelectScratchBytes : needs_tmp ? 4 : 0;
  if (tmp_bytes > 0 && !alloc(Mc * Nc * tmp_bytes, &ep.tmp)) return std::optional<Epilogue>();
  if (needs_zero && !alloc(64, &ep.zero)) return std::optional<Epilogue>();
  // Results read outside the epilogue are stored; so is the dot's when anything else reads it.
  const HloInstruction* root = dot.parent()->root_instruction();
  ep.stored.assign(ops.size(), false);
  for (size_t m = 0; m < ops.size(); ++m) {
    if (ep.reductions.count(m) > 0) continue;  // stored by ReduceEpilogueBlock / FinishEpilogue
    ep.stored[m] = ops[m] == root || ops[m]->users().empty();
    for (const HloInstruction* u : ops[m]->users())
      ep.stored[m] = ep.stored[m] || member_index(u) < 0;
  }
  ep.store_dot = &dot == root;
  for (const HloInstruction* u : dot.users()) ep.store_dot = ep.store_dot || member_index(u) < 0;
  // Scalars are loaded once.
  int64_t loads = 0;
  for (const Epilogue::External& x : ep.ext) {
    if (x.mode != isa::Broadcast::kScalar) continue;
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, x.buf->address, x.vmem, x.buf->elem_bytes(),
                      x.buf->elem_bytes(), kLoadFlag);
    ++loads;
  }
  em_.Wait(kLoadFlag, loads);
  // Running column results start at the reducer's identity (the init value is folded in at the
  // end, once).
  for (auto& [m, r] : ep.reductions) {
    const uint32_t identity = r.op == isa::ReduceOp::kSum   ? 0u
                              : r.op == isa::ReduceOp::kMax ? 0xFF800000u   // -inf
                                                            : 0x7F800000u;  // +inf
    if (r.column) {
      em_.Emit(isa::op::VpuFill{.dtype = isa::DType::kF32,
                                .dst = r.running,
                                .count = static_cast<uint64_t>(ops[m]->shape().ElementCount()),
                                .value = identity});
    }
    const auto& src = ep.source[m];
    r.init = ep.ext[static_cast<size_t>(-2 - src[1])].vmem;
  }
  return std::optional<Epilogue>(std::move(ep));
}

Status Lowerer::ReduceEpilogueBlock(const HloInstruction& reduce, Epilogue::Reduction& r,
                                    uint64_t src, int64_t b, int64_t M, int64_t m0, int64_t mc,
                                    int64_t n0, int64_t nc, int64_t N, int64_t* stores) {
  em_.Emit(
      isa::op::VpuReduce{.op = r.op,
                         .axis = r.column ? isa::ReduceAxis::kSublanes : isa::ReduceAxis::kLanes,
                         .dtype = isa::DType::kF32,
                         .dst = r.partial,
                         .src = src,
                         .rows = static_cast<uint64_t>(mc),
                         .cols = static_cast<uint64_t>(nc)});
  const auto combine = [&](uint64_t dst, uint64_t a, uint64_t b_addr, int64_t count,
                           isa::Broadcast bm) {
    em_.Emit(isa::op::VpuBinary{.op = CombineOp(r.op),
                                .dtype = isa::DType::kF32,
                                .dst = dst,
                                .a = a,
                                .b = b_addr,
                                .rows = 1,
                                .cols = static_cast<uint64_t>(count),
                                .a_bcast = isa::Broadcast::kNone,
                                .b_bcast = bm});
  };
  if (r.column) {
    const uint64_t at = r.running + static_cast<uint64_t>(n0 * 4);
    combine(at, at, r.partial, nc, isa::Broadcast::kNone);
    return OkStatus();
  }
  // Row sums over the N blocks of this M block: the first starts the running result, the last
  // folds in the init value and stores the block's rows.
  if (n0 == 0) {
    em_.Emit(isa::op::VpuCopy{.dtype = isa::DType::kF32,
                              .dst = r.running,
                              .src = r.partial,
                              .n0 = static_cast<uint64_t>(mc),
                              .n1 = 1,
                              .n2 = 1,
                              .src_s0 = 1,
                              .src_s1 = 0,
                              .src_s2 = 0,
                              .dst_s0 = 1});
  } else {
    combine(r.running, r.running, r.partial, mc, isa::Broadcast::kNone);
  }
  if (n0 + nc < N) return OkStatus();
  combine(r.running, r.running, r.init, mc, isa::Broadcast::kScalar);
  em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, r.running,
                    Buffer(&reduce).address + static_cast<uint64_t>((b * M + m0) * 4), mc * 4, 4,
                    kStoreFlag);
  ++*stores;
  return OkStatus();
}

Status Lowerer::CloseEpilogue(const HloInstruction& dot, bool folded_into_pops, Epilogue* ep) {
  if (folded_into_pops) {
    for (const HloInstruction* m : groups_.epilogue_of_dot.at(&dot)) epilogue_done_.insert(m);
  }
  if (ep == nullptr) return OkStatus();
  TPUSIM_RETURN_IF_ERROR(FinishEpilogue(dot, *ep));
  em_.Wait(kStoreFlag, ep->pending_stores);
  for (const HloInstruction* m : ep->ops) epilogue_done_.insert(m);
  return OkStatus();
}

Status Lowerer::FinishEpilogue(const HloInstruction& dot, Epilogue& ep) {
  (void)dot;
  for (auto& [m, r] : ep.reductions) {
    if (!r.column) continue;
    const HloInstruction& reduce = *ep.ops[m];
    em_.set_tag(TagOf(reduce));
    const int64_t n = reduce.shape().ElementCount();
    em_.Emit(isa::op::VpuBinary{.op = CombineOp(r.op),
                                .dtype = isa::DType::kF32,
                                .dst = r.running,
                                .a = r.running,
                                .b = r.init,
                                .rows = 1,
                                .cols = static_cast<uint64_t>(n),
                                .a_bcast = isa::Broadcast::kNone,
                                .b_bcast = isa::Broadcast::kScalar});
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, r.running, Buffer(&reduce).address, n * 4, 4,
                      kStoreFlag);
    ++ep.pending_stores;
  }
  em_.set_tag(TagOf(dot));
  return OkStatus();
}

Status Lowerer::RunEpilogue(const HloInstruction& dot, Epilogue& ep, uint64_t block,
                            isa::DType block_dtype, int64_t b, int64_t M, int64_t m0, int64_t mc,
                            int64_t n0, int64_t nc, int64_t N) {
  // The previous block's results must be stored before they are overwritten.
  em_.Wait(kStoreFlag, ep.pending_stores);
  ep.pending_stores = 0;
  // This block's part of the operands: rows (b, m0 .. m0 + mc), columns n0 .. n0 + nc.
  int64_t loads = 0;
  for (const Epilogue::External& x : ep.ext) {
    const int64_t e = x.buf->elem_bytes();
    switch (x.mode) {
      case isa::Broadcast::kScalar:
        break;
      case isa::Broadcast::kRow:
        em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                          x.buf->address + static_cast<uint64_t>(n0 * e), x.vmem, nc * e, e,
                          kLoadFlag);
        ++loads;
        break;
      case isa::Broadcast::kCol:
        em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                          x.buf->address + static_cast<uint64_t>((b * M + m0) * e), x.vmem, mc * e,
                          e, kLoadFlag);
        ++loads;
        break;
      case isa::Broadcast::kNone: {
        const std::vector<int64_t> dims{mc, nc}, ss{N * e, e}, ds{nc * e, e};
        TPUSIM_ASSIGN_OR_RETURN(
            int64_t n, em_.Dma(isa::Opcode::kDmaHbmToVmem,
                               x.buf->address + static_cast<uint64_t>(((b * M + m0) * N + n0) * e),
                               ss, x.vmem, ds, dims, e, kLoadFlag));
        loads += n;
        break;
      }
    }
  }
  em_.Wait(kLoadFlag, loads);
  const int32_t dot_tag = TagOf(dot);
  for (size_t m = 0; m < ep.ops.size(); ++m) {
    const HloInstruction& op_inst = *ep.ops[m];
    em_.set_tag(TagOf(op_inst));
    std::vector<VpuOperand> vops;
    for (int64_t src : ep.source[m]) {
      if (src == kEpilogueDotBlock) {
        vops.push_back({block, isa::Broadcast::kNone, block_dtype});
      } else if (src >= 0) {
        vops.push_back({ep.result[static_cast<size_t>(src)], isa::Broadcast::kNone,
                        Buffer(ep.ops[static_cast<size_t>(src)]).dtype});
      } else {
        const Epilogue::External& x = ep.ext[static_cast<size_t>(-2 - src)];
        vops.push_back({x.vmem, x.mode, x.buf->dtype});
      }
    }
    if (auto red = ep.reductions.find(m); red != ep.reductions.end()) {
      TPUSIM_RETURN_IF_ERROR(ReduceEpilogueBlock(op_inst, red->second, vops[0].vmem, b, M, m0, mc,
                                                 n0, nc, N, &ep.pending_stores));
      continue;
    }
    const HbmBuffer& out = Buffer(&op_inst);
    if (op_inst.opcode() == hlo::HloOpcode::kIsFinite) {
      em_.Emit(isa::op::VpuFill{.dtype = vops[0].dtype, .dst = ep.zero, .count = 1, .value = 0});
    }
    EmitVpuOp(op_inst, out.dtype, vops, ep.result[m], ep.tmp, ep.zero, static_cast<uint64_t>(mc),
              static_cast<uint64_t>(nc), static_cast<uint64_t>(mc * nc));
    if (ep.stored[m]) {
      const int64_t e = out.elem_bytes();
      const std::vector<int64_t> dims{mc, nc}, ss{nc * e, e}, ds{N * e, e};
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t n, em_.Dma(isa::Opcode::kDmaVmemToHbm, ep.result[m], ss,
                             out.address + static_cast<uint64_t>(((b * M + m0) * N + n0) * e), ds,
                             dims, e, kStoreFlag));
      ep.pending_stores += n;
    }
  }
  em_.set_tag(dot_tag);
  return OkStatus();
}

Lowerer::ColumnShare Lowerer::DotColumnShare(int64_t n) const {
  const int64_t unit = config_.core.mxu.cols * std::max<int64_t>(1, config_.core.mxu.count);
  const int parts = megacore_.size;
  if (parts <= 1 || n < parts * unit) return ColumnShare{0, n, 1};
  const int64_t per = CeilDiv(CeilDiv(n, unit), parts) * unit;
  const int64_t begin = std::min(n, megacore_.rank * per);
  return ColumnShare{begin, std::min(n, begin + per), parts};
}

void Lowerer::MegacoreBarrier() {
  isa::ReplicaGroups table;
  const int32_t first = core_id_ - megacore_.rank;
  std::vector<int32_t> ids;
  for (int k = 0; k < megacore_.size; ++k) ids.push_back(first + k);
  table.groups.push_back(std::move(ids));
  auto& all = program_->replica_groups;
  auto it = std::find(all.begin(), all.end(), table);
  if (it == all.end()) it = all.insert(all.end(), std::move(table));
  em_.Emit(isa::op::SyncBarrier{.group = static_cast<uint64_t>(it - all.begin())});
}

}  // namespace tpusim::compiler
