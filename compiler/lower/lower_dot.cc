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
// Precision (DESIGN.md Numerics; XLA's bf16_3x / bf16_6x): an f32 operand enters the array as bf16
// parts (hi, lo, lolo). DEFAULT = 1 pass hi*hi; HIGH = 3 passes lo*hi + hi*lo + hi*hi; HIGHEST = 6
// passes adding lo*lo, hi*lolo, lolo*hi — smallest terms first. A bf16 operand has only `hi`, so
// terms that need its lo/lolo parts are dropped. s8 x s8 -> s32 uses the int8 path.
#include <fmt/format.h>

#include <algorithm>

#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using isa::PrecisionPart;

namespace {

struct PassParts {
  PrecisionPart lhs, rhs;
};

std::vector<PassParts> PrecisionPasses(hlo::Precision p, bool lhs_f32, bool rhs_f32) {
  using P = PrecisionPart;
  std::vector<PassParts> all;
  switch (p) {
    case hlo::Precision::kDefault:
      all = {{P::kHi, P::kHi}};
      break;
    case hlo::Precision::kHigh:
      all = {{P::kLo, P::kHi}, {P::kHi, P::kLo}, {P::kHi, P::kHi}};
      break;
    case hlo::Precision::kHighest:
      all = {{P::kLo, P::kLo}, {P::kHi, P::kLoLo}, {P::kLoLo, P::kHi},
             {P::kLo, P::kHi}, {P::kHi, P::kLo},   {P::kHi, P::kHi}};
      break;
  }
  std::vector<PassParts> out;
  for (const PassParts& pp : all) {
    if ((!lhs_f32 && pp.lhs != P::kHi) || (!rhs_f32 && pp.rhs != P::kHi)) continue;
    out.push_back(pp);
  }
  return out;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Status Lowerer::LowerDot(const HloInstruction& inst) {
  const auto& dn = inst.dot_dimension_numbers();
  const HbmBuffer& L = Buffer(inst.operand(0));
  const HbmBuffer& Rb = Buffer(inst.operand(1));
  const HbmBuffer& O = Buffer(&inst);
  const bool batched = !dn.lhs_batch_dimensions.empty();
  const size_t rank = batched ? 3 : 2;
  if (L.dims.size() != rank || Rb.dims.size() != rank ||
      dn.rhs_contracting_dimensions.size() != 1) {
    return Internal("dot %" + inst.name() + " is not in canonical form (run canonicalize first)");
  }
  const bool nk = dn.rhs_contracting_dimensions[0] == static_cast<int64_t>(rank) - 1;
  const int64_t B = batched ? L.dims[0] : 1;
  const int64_t M = L.dims[rank - 2];
  const int64_t K = L.dims[rank - 1];
  const int64_t N = nk ? Rb.dims[rank - 2] : Rb.dims[rank - 1];

  using isa::DType;
  const auto is_float = [](DType t) { return t == DType::kF32 || t == DType::kBF16; };
  bool int_path = false;
  if (L.dtype == DType::kS8 && Rb.dtype == DType::kS8 && O.dtype == DType::kS32) {
    int_path = true;
  } else if (!(is_float(L.dtype) && is_float(Rb.dtype) && is_float(O.dtype))) {
    return Unsupported(inst,
                       fmt::format("dot of {} x {} -> {} (the MXU takes f32/bf16 operands "
                                   "with f32/bf16 results, or s8 x s8 -> s32)",
                                   isa::Name(L.dtype), isa::Name(Rb.dtype), isa::Name(O.dtype)));
  }
  const hlo::Precision prec = std::max(inst.operand_precision(0), inst.operand_precision(1));
  const std::vector<PassParts> passes =
      int_path ? std::vector<PassParts>{{PrecisionPart::kHi, PrecisionPart::kHi}}
               : PrecisionPasses(prec, L.dtype == DType::kF32, Rb.dtype == DType::kF32);
  if (M == 0 || N == 0) return OkStatus();
  if (K == 0) return Unsupported(inst, "dot with an empty contracting dimension");

  const auto& mxu = config_.core.mxu;
  const int64_t R = mxu.rows, C = mxu.cols, nm = std::max<int64_t>(1, mxu.count);
  const int64_t acc_rows = mxu.accumulator_rows > 0 ? mxu.accumulator_rows : (int64_t{1} << 20);
  const int64_t le = L.elem_bytes(), re = Rb.elem_bytes(), oe = O.elem_bytes();
  const int64_t V = em_.vmem_free() - 3 * 64;

  // Block sizes (see the file comment). With double buffering the LHS and result blocks are held
  // twice, so the next LHS block streams in and the previous result block streams out while the
  // MXUs work on the current one.
  struct Blocks {
    int64_t Kc = 0, Nc = 0, Mc = 0;
  };
  // K split: when the whole N fits one array's columns (N <= C) but the core has several MXUs,
  // K tile t goes to MXU t % ksplit, each MXU accumulates its own partial sum, and the partials are
  // popped (f32/s32) and added on the VPU — otherwise all but one MXU would idle.
  const int64_t ksplit =
      (N <= C && nm > 1 && K * N * re <= V / 2) ? std::min(nm, CeilDiv(K, R)) : 1;
  auto choose = [&](bool db) {
    Blocks bl{K, N, 0};
    if (K * N * re > V / 2) {
      bl.Nc = std::min(N, std::max(C, (V / 2) / (K * re) / C * C));
      if (K * bl.Nc * re > V / 2) {
        bl.Nc = std::min(C, N);
        bl.Kc = std::min(K, std::max(R, (V / 2) / (bl.Nc * re) / R * R));
      }
    }
    const int64_t copies = db ? 2 : 1;
    auto rows_for = [&](int64_t nc) {
      const int64_t tiles_per_mxu = CeilDiv(CeilDiv(nc, C), nm);
      const int64_t per_row = copies * (bl.Kc * le + nc * oe) + (ksplit > 1 ? ksplit * C * 4 : 0);
      return std::min({M, acc_rows / tiles_per_mxu, (V - bl.Kc * nc * re) / per_row});
    };
    bl.Mc = rows_for(bl.Nc);
    // Streaming fewer than R rows per weight tile leaves the array mostly filling and draining:
    // trade N-block width (weights re-read per M block) for taller M blocks.
    const int64_t want_rows = std::min(M, R);
    while (bl.Mc < want_rows && bl.Nc > C) {
      bl.Nc = std::max(C, (bl.Nc / 2 + C - 1) / C * C);
      bl.Mc = rows_for(bl.Nc);
    }
    if (bl.Mc < M && bl.Mc > 8) bl.Mc = bl.Mc / 8 * 8;  // whole sublane groups
    return bl;
  };
  bool db = double_buffer_;
  Blocks bl = choose(db);
  if (db && (bl.Mc < 1 || bl.Kc < K)) {
    db = false;
    bl = choose(false);
  }
  const int64_t Kc = bl.Kc, Nc = bl.Nc, Mc = bl.Mc;
  if (Mc < 1) {
    return DoesNotFit(
        inst,
        fmt::format(
            "VMEM: a [1,{}] LHS block, a [{},{}] weight block and a [1,{}] result block need {} "
            "bytes, core.vmem.capacity_bytes = {}",
            Kc, Kc, Nc, Nc, Kc * le + Kc * Nc * re + Nc * oe, em_.vmem_bytes()));
  }
  const int nbuf = db ? 2 : 1;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t rhs_v, Vmem(inst, Kc * Nc * re, "weight block"));
  uint64_t lhs_v[2] = {0, 0}, out_v[2] = {0, 0};
  for (int i = 0; i < nbuf; ++i) {
    TPUSIM_ASSIGN_OR_RETURN(lhs_v[i], Vmem(inst, Mc * Kc * le, "LHS block"));
    TPUSIM_ASSIGN_OR_RETURN(out_v[i], Vmem(inst, Mc * Nc * oe, "result block"));
  }
  uint64_t partials = 0;  // ksplit x [Mc, N] partial sums (4-byte accumulator words)
  if (ksplit > 1) {
    TPUSIM_ASSIGN_OR_RETURN(partials, Vmem(inst, ksplit * Mc * N * 4, "K-split partial sums"));
  }

  // LHS block [mc, kc] of batch b at (m0, k0) -> VMEM `dst`, signalling `flag`.
  auto load_lhs = [&](int64_t b, int64_t m0, int64_t k0, uint64_t dst,
                      uint64_t flag) -> StatusOr<int64_t> {
    const int64_t mc = std::min(Mc, M - m0), kc = std::min(Kc, K - k0);
    const std::vector<int64_t> dims{mc, kc}, ss{K * le, le}, ds{kc * le, le};
    return em_.Dma(isa::Opcode::kDmaHbmToVmem,
                   L.address + static_cast<uint64_t>(((b * M + m0) * K + k0) * le), ss, dst, ds,
                   dims, le, flag);
  };
  // Flags: kLoadFlag for weights (and the LHS without double buffering), kLhsFlag0 + s for LHS
  // buffer s, kOutFlag0 + s for the store of result buffer s.
  constexpr uint64_t kLhsFlag0 = 2, kOutFlag0 = 4;
  int64_t pending_store[2] = {0, 0};
  int64_t out_block = 0;

  std::vector<std::pair<int64_t, int64_t>> row_blocks;  // (b, m0)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t m0 = 0; m0 < M; m0 += Mc) row_blocks.emplace_back(b, m0);
  }
  int64_t lhs_pending = 0;
  if (db) {
    TPUSIM_ASSIGN_OR_RETURN(
        lhs_pending, load_lhs(row_blocks[0].first, row_blocks[0].second, 0, lhs_v[0], kLhsFlag0));
  }
  const DType acc_dtype = int_path ? DType::kS32 : DType::kF32;
  for (size_t it = 0; it < row_blocks.size(); ++it) {
    const auto [b, m0] = row_blocks[it];
    const int s = db ? static_cast<int>(it % 2) : 0;
    const uint64_t lhs = lhs_v[s];
    const int64_t mc = std::min(Mc, M - m0);
    // With double buffering: wait for this block's LHS (after issuing the weight loads, so both
    // stream in together), then prefetch the next block's LHS into the other buffer.
    bool lhs_ready = !db;
    auto wait_lhs_and_prefetch = [&]() -> Status {
      if (lhs_ready) return OkStatus();
      lhs_ready = true;
      em_.Wait(kLhsFlag0 + static_cast<uint64_t>(s), lhs_pending);
      lhs_pending = 0;
      if (it + 1 < row_blocks.size()) {
        TPUSIM_ASSIGN_OR_RETURN(lhs_pending,
                                load_lhs(row_blocks[it + 1].first, row_blocks[it + 1].second, 0,
                                         lhs_v[1 - s], kLhsFlag0 + static_cast<uint64_t>(1 - s)));
      }
      return OkStatus();
    };
    for (int64_t n0 = 0; n0 < N; n0 += Nc) {
      const int64_t nc = std::min(Nc, N - n0);
      for (int64_t k0 = 0; k0 < K; k0 += Kc) {
        const int64_t kc = std::min(Kc, K - k0);
        int64_t loads = 0;
        if (!db && !(Kc == K && n0 > 0)) {  // else the [mc, K] LHS block is already in VMEM
          TPUSIM_ASSIGN_OR_RETURN(int64_t n, load_lhs(b, m0, k0, lhs, kLoadFlag));
          loads += n;
        }
        if (!(Kc == K && Nc == N && it > 0 && row_blocks[it - 1].first == b)) {
          // else this batch's whole [K, N] weight matrix is still in VMEM
          const uint64_t src =
              Rb.address +
              static_cast<uint64_t>((nk ? (b * N + n0) * K + k0 : (b * K + k0) * N + n0) * re);
          const std::vector<int64_t> dims =
              nk ? std::vector<int64_t>{nc, kc} : std::vector<int64_t>{kc, nc};
          const std::vector<int64_t> ss{(nk ? K : N) * re, re};
          const std::vector<int64_t> ds{dims[1] * re, re};
          TPUSIM_ASSIGN_OR_RETURN(int64_t n, em_.Dma(isa::Opcode::kDmaHbmToVmem, src, ss, rhs_v, ds,
                                                     dims, re, kLoadFlag));
          loads += n;
        }
        em_.Wait(kLoadFlag, loads);
        TPUSIM_RETURN_IF_ERROR(wait_lhs_and_prefetch());
        for (int64_t kt = 0; kt < kc; kt += R) {
          const int64_t kk = std::min(R, kc - kt);
          for (int64_t nt = 0; nt < nc; nt += C) {
            const int64_t nn = std::min(C, nc - nt);
            const int64_t j = nt / C;
            const int64_t t = kt / R;  // K tile index within the block
            const uint64_t unit = static_cast<uint64_t>(ksplit > 1 ? t % ksplit : j % nm);
            const uint64_t acc = static_cast<uint64_t>(ksplit > 1 ? 0 : (j / nm) * Mc);
            const bool first = ksplit > 1 ? t < ksplit : (k0 == 0 && kt == 0);
            for (size_t p = 0; p < passes.size(); ++p) {
              em_.Emit(isa::op::MxuLoadWeights{
                  .mxu = unit,
                  .addr = rhs_v + static_cast<uint64_t>((nk ? nt * kc + kt : kt * nc + nt) * re),
                  .k = static_cast<uint64_t>(kk),
                  .n = static_cast<uint64_t>(nn),
                  .stride = static_cast<uint64_t>(nk ? kc : nc),
                  .dtype = Rb.dtype,
                  .transpose = nk,
                  .part = passes[p].rhs});
              em_.Emit(isa::op::MxuMatmul{.mxu = unit,
                                          .lhs = lhs + static_cast<uint64_t>(kt * le),
                                          .stride = static_cast<uint64_t>(kc),
                                          .m = static_cast<uint64_t>(mc),
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
      // Pop every N tile into a result buffer whose previous store has finished, then store it.
      const int o = db ? static_cast<int>(out_block++ % 2) : 0;
      em_.Wait(kOutFlag0 + static_cast<uint64_t>(o), pending_store[o]);
      pending_store[o] = 0;
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
                                      .dst = last ? out_v[o] : partials,
                                      .a = partials,
                                      .b = partials + static_cast<uint64_t>(q * Mc * N * 4),
                                      .rows = 1,
                                      .cols = static_cast<uint64_t>(words)});
        }
        if (O.dtype != acc_dtype) {
          em_.Emit(isa::op::VpuConvert{.src_dtype = acc_dtype,
                                       .dtype = O.dtype,
                                       .dst = out_v[o],
                                       .src = partials,
                                       .count = static_cast<uint64_t>(words)});
        }
      } else {
        for (int64_t nt = 0; nt < nc; nt += C) {
          const int64_t j = nt / C;
          em_.Emit(isa::op::MxuPop{.mxu = static_cast<uint64_t>(j % nm),
                                   .acc = static_cast<uint64_t>((j / nm) * Mc),
                                   .m = static_cast<uint64_t>(mc),
                                   .n = static_cast<uint64_t>(std::min(C, nc - nt)),
                                   .acc_dtype = acc_dtype,
                                   .dst = out_v[o] + static_cast<uint64_t>(nt * oe),
                                   .stride = static_cast<uint64_t>(nc),
                                   .dtype = O.dtype,
                                   .act = isa::Activation::kNone});
        }
      }
      const std::vector<int64_t> dims{mc, nc}, ss{nc * oe, oe}, ds{N * oe, oe};
      TPUSIM_ASSIGN_OR_RETURN(
          pending_store[o], em_.Dma(isa::Opcode::kDmaVmemToHbm, out_v[o], ss,
                                    O.address + static_cast<uint64_t>(((b * M + m0) * N + n0) * oe),
                                    ds, dims, oe, kOutFlag0 + static_cast<uint64_t>(o)));
      if (!db) {
        em_.Wait(kOutFlag0, pending_store[0]);
        pending_store[0] = 0;
      }
      TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
    }
  }
  em_.Wait(kOutFlag0, pending_store[0]);
  em_.Wait(kOutFlag0 + 1, pending_store[1]);
  return OkStatus();
}

}  // namespace tpusim::compiler
