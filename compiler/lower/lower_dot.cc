// dot on the MXUs, weight-stationary (DESIGN.md §4, §5): plan, then emit, as XLA's emitters do.
//
// Input: a canonical dot (passes/canonicalize.h): lhs [B,M,K], rhs [B,K,N] ("KN") or [B,N,K] ("NK",
// loaded with load_weights transpose=1), result [B,M,N]; rank-2 forms without B.
//
// LowerDot checks the dtypes, chooses the precision passes (lower/mxu_passes.h) and the megacore
// share; PlanDotKernel decides the fusions (pop activation, epilogue, operand prologues), asks
// PlanDot (plan_dot.h: blocks, K split, buffers, loop order, row split) for the plan and allocates
// its VMEM; EmitDot writes the software pipeline from the plan.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "compiler/lower/blocking.h"
#include "compiler/lower/lowerer.h"
#include "compiler/lower/mxu_passes.h"
#include "compiler/lower/plan_dot.h"
#include "compiler/passes/canonicalize.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using isa::PrecisionPart;

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

// A dot's kernel between planning and emission: its operands, plan, schedule, fusions and VMEM
// buffers.
struct Lowerer::DotKernel {
  const HloInstruction* inst = nullptr;
  const HbmBuffer* L = nullptr;   // LHS [B,M,K] ([B,K,M] when km)
  const HbmBuffer* Rb = nullptr;  // weights [B,K,N_all] ([B,N_all,K] when nk)
  const HbmBuffer* O = nullptr;   // what the pops store: the result (or its folded activation)
  bool km = false, nk = false;
  // Stationary LHS (canonicalize.h, kDotStationaryLhsAttribute): the kernel computes the
  // transposed product, L = the dot's RHS streamed, Rb = the dot's LHS as the weights, so its
  // plan's M is the dot's N and its N the dot's M. Each popped [Mc, Nc] block is transposed on the
  // XLU into the dot's [Nc, Mc] block (tpose_v0 holds the pops) before its epilogue and store.
  bool swap = false;
  int64_t N_all = 0, n_lo = 0;  // megacore: this core's columns [n_lo, n_lo + plan.shape.N)
  std::vector<PassParts> passes;
  isa::DType acc_dtype = isa::DType::kF32;
  std::optional<PopActivation> pop_act;
  DotPlan plan;
  std::vector<DotStep> steps;
  std::optional<Prologue> pro[2];  // the LHS's and the weights' operand fusions
  std::optional<Epilogue> epi;
  // VMEM: operand chunk buffers (stage: a KM LHS's [kc, mc] chunks as loaded, before the XLU
  // transpose), result blocks and ksplit x [Mc, N] partial sums (4-byte accumulator words).
  uint64_t lhs_v0 = 0, stage_v0 = 0, rhs_v0 = 0, out_v0 = 0, tpose_v0 = 0, partials = 0;
  int64_t store_count[2] = {0, 0};  // descriptors of the store in flight from result buffer o

  int64_t in_slot(int64_t v) const { return v % plan.input_buffers; }
  uint64_t lhs_buf(int64_t v) const {
    const DotBlocks& b = plan.blocks;
    return lhs_v0 + static_cast<uint64_t>(in_slot(v) * b.Mc * b.Kc * plan.shape.le);
  }
  uint64_t stage_buf(int64_t v) const {
    const DotBlocks& b = plan.blocks;
    return stage_v0 + static_cast<uint64_t>(in_slot(v) * b.Mc * b.Kc * plan.shape.le);
  }
  uint64_t rhs_buf(int64_t v) const {
    const DotBlocks& b = plan.blocks;
    return rhs_v0 + static_cast<uint64_t>(in_slot(v) * b.Kc * b.Nc * plan.shape.re);
  }
  uint64_t out_buf(int64_t v) const {
    const DotBlocks& b = plan.blocks;
    return out_v0 + static_cast<uint64_t>((v % b.nbuf) * b.Mc * b.Nc * plan.shape.oe);
  }
  // Where block v is popped: its result buffer, or with `swap` the buffer it is transposed from.
  uint64_t pop_buf(int64_t v) const {
    const DotBlocks& b = plan.blocks;
    return swap ? tpose_v0 + static_cast<uint64_t>((v % b.nbuf) * b.Mc * b.Nc * plan.shape.oe)
                : out_buf(v);
  }
  // Result block (m0, mc) x (n0, nc) of the plan in the dot's own coordinates: batch b, rows
  // [m0, m0 + mc) of M, columns [n0, n0 + nc) of N_all.
  struct Block {
    int64_t M, m0, mc, n0, nc, N_all;
  };
  Block DotBlock(int64_t m0, int64_t mc, int64_t n0, int64_t nc) const {
    if (swap) return Block{plan.shape.N, n0, nc, m0, mc, plan.shape.M};
    return Block{plan.shape.M, m0, mc, n_lo + n0, nc, N_all};
  }
};

// An output block whose matmuls are issued and whose pop or store is not yet.
struct DotOutBlock {
  bool valid = false;
  int64_t b = 0, m0 = 0, n0 = 0, acc0 = 0, block = 0;
};

namespace {
constexpr uint64_t kDotLoadFlag = 2, kOutFlag0 = 4;
}  // namespace

// Whether the dot [M, K] x [K, N] runs with its LHS stationary (canonicalize.h,
// kDotStationaryLhsAttribute): when its result layout says so, neither the megacore nor an
// operand prologue splits it (a prologue runs on its operand's blocks in the operand's own
// orientation), and its epilogue, if any, has no reduction (the reductions follow the result's
// rows block by block, in the loop order of the untransposed kernel).
bool Lowerer::StationaryLhs(const HloInstruction& inst, int64_t M, int64_t N) const {
  if (!DotHasStationaryLhs(inst) || M <= 1 || N <= 1) return false;
  if (DotColumnShare(M).parts > 1 || DotColumnShare(N).parts > 1) return false;
  if (groups_.prologue_of_dot.count({&inst, 0}) > 0 ||
      groups_.prologue_of_dot.count({&inst, 1}) > 0) {
    return false;
  }
  if (auto it = groups_.epilogue_of_dot.find(&inst); it != groups_.epilogue_of_dot.end()) {
    for (const HloInstruction* op : it->second) {
      if (op->opcode() == hlo::HloOpcode::kReduce) return false;
    }
  }
  return true;
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
  DotKernel k;
  k.inst = &inst;
  k.L = &L;
  k.Rb = &Rb;
  // KM: the LHS is [B,K,M]; its blocks are loaded as [kc, mc] and transposed on the XLU.
  k.km = dn.lhs_contracting_dimensions[0] == static_cast<int64_t>(rank) - 2;
  k.nk = dn.rhs_contracting_dimensions[0] == static_cast<int64_t>(rank) - 1;
  const int64_t B = batched ? L.dims[0] : 1;
  int64_t M = k.km ? L.dims[rank - 1] : L.dims[rank - 2];
  const int64_t K = k.km ? L.dims[rank - 2] : L.dims[rank - 1];
  // Megacore: this core computes result columns [n_lo, n_lo + N) of the N_all.
  k.N_all = k.nk ? Rb.dims[rank - 2] : Rb.dims[rank - 1];
  if (StationaryLhs(inst, M, k.N_all)) {
    // The transposed product: the RHS streams ([B,K,N] is a KM operand for the stream, [B,N,K] a
    // plain one) and the LHS is the weights ([B,M,K] loaded with transpose=1, [B,K,M] as is).
    k.swap = true;
    std::swap(k.L, k.Rb);
    const bool km = !k.nk, nk = !k.km;
    k.km = km;
    k.nk = nk;
    std::swap(M, k.N_all);
  }
  const ColumnShare share = DotColumnShare(k.N_all);
  if (megacore_.rank > 0 && share.parts == 1) return OkStatus();
  k.n_lo = share.begin;
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
  k.passes = int_path ? std::vector<PassParts>{{PrecisionPart::kHi, PrecisionPart::kHi}}
                      : PrecisionPasses(prec, k.L->dtype == DType::kF32,
                                        k.Rb->dtype == DType::kF32);
  k.acc_dtype = int_path ? DType::kS32 : DType::kF32;
  if (K == 0 && M > 0 && k.N_all > 0) {
    return Unsupported(inst, "dot with an empty contracting dimension");
  }
  if (share.parts > 1) MegacoreBarrier();  // the operands are in HBM
  if (M == 0 || N == 0 || K == 0) {
    if (share.parts > 1) MegacoreBarrier();
    return OkStatus();
  }
  TPUSIM_ASSIGN_OR_RETURN(const bool planned,
                          PlanDotKernel(k,
                                        DotShape{B, M, K, N, k.L->elem_bytes(),
                                                 k.Rb->elem_bytes()},
                                        share.parts));
  if (!planned) {
    // The operands' prologues do not fit beside the dot's blocks: their ops get kernels of their
    // own and the dot is lowered again without them.
    TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
    return LowerDot(inst);
  }
  TPUSIM_RETURN_IF_ERROR(EmitDot(k));
  TPUSIM_RETURN_IF_ERROR(CloseEpilogue(inst, k.pop_act.has_value(), k.epi ? &*k.epi : nullptr));
  if (share.parts > 1) MegacoreBarrier();  // every share of the result is in HBM
  return OkStatus();
}

StatusOr<bool> Lowerer::PlanDotKernel(DotKernel& k, DotShape shape, int parts) {
  const HloInstruction& inst = *k.inst;
  const int64_t nm = std::max<int64_t>(1, config_.core.mxu.count);
  // Pop-time fusion (fusion.h, AddDotEpilogues): a third of VMEM is kept for the epilogue's
  // operand and result blocks.
  const std::vector<const HloInstruction*>* epilogue_ops = nullptr;
  if (auto it = groups_.epilogue_of_dot.find(&inst);
      it != groups_.epilogue_of_dot.end() && parts == 1 && megacore_.rank == 0) {
    epilogue_ops = &it->second;
  }
  // TPU v1's Activate: an activation-only epilogue runs in the pops (FoldPopActivation), which
  // then store straight into the activation's buffer. Not with a K split, whose pops are partials.
  if (epilogue_ops != nullptr && (nm == 1 || shape.N > config_.core.mxu.cols)) {
    k.pop_act = FoldPopActivation(inst, *epilogue_ops);
    if (k.pop_act) epilogue_ops = nullptr;
  }
  k.O = k.pop_act ? &Buffer(k.pop_act->last) : &Buffer(&inst);
  shape.oe = k.O->elem_bytes();
  shape.lhs_copies = k.km ? 2 : 1;
  shape.out_copies = k.swap ? 2 : 1;
  int64_t V = (em_.vmem_free() - 3 * 64) * (epilogue_ops != nullptr ? 2 : 3) / 3;

  // Operand fusion (fusion.h, AddDotPrologues): the producers of the LHS [M,K] (index 0) and of
  // the weights [K,N] (index 1) run on each block as it is loaded. Their blocks count in the block
  // choice; their row/column vectors are reserved at full length. When they do not fit, the ops
  // get kernels of their own (LowerPrologueKernels) and the dot is lowered again without them.
  const std::vector<const HloInstruction*>* pro_ops[2] = {nullptr, nullptr};
  if (prologue_disabled_.count(&inst) == 0 && parts == 1) {
    for (int idx = 0; idx < 2; ++idx) {
      auto it = groups_.prologue_of_dot.find({&inst, idx});
      if (it == groups_.prologue_of_dot.end()) continue;
      pro_ops[idx] = &it->second;
      const PrologueFootprint f = MeasurePrologue(it->second);
      const int64_t longest =
          idx == 1 ? std::max(shape.K, k.N_all) : std::max(shape.M, shape.K);
      V -= DotInputBuffers(2) *
           (f.vectors * longest * f.vector_bytes_per_element + f.allocations * 64);
      (idx == 0 ? shape.lhs_extra : shape.rhs_extra) = f.per_element;
    }
  }
  const bool fused_operands = pro_ops[0] != nullptr || pro_ops[1] != nullptr;
  if (fused_operands && V <= 0) return false;
  StatusOr<DotPlan> plan = PlanDot(shape, config_, V, double_buffer_);
  if (!plan.ok() && fused_operands) return false;
  if (!plan.ok()) return DoesNotFit(inst, plan.status().message());
  k.plan = *std::move(plan);
  TPUSIM_RETURN_IF_ERROR(AllocateDotBuffers(k));
  const int64_t Mc = k.plan.blocks.Mc, Kc = k.plan.blocks.Kc, Nc = k.plan.blocks.Nc;
  for (int idx = 0; idx < 2; ++idx) {
    if (pro_ops[idx] == nullptr) continue;
    k.pro[idx] = idx == 1 ? PlanPrologue(*pro_ops[idx], Kc, Nc, k.plan.input_buffers)
                          : PlanPrologue(*pro_ops[idx], Mc, Kc, k.plan.input_buffers);
    if (!k.pro[idx]) return false;
  }
  TPUSIM_ASSIGN_OR_RETURN(k.epi, epilogue_ops != nullptr
                                     ? PlanEpilogue(inst, *epilogue_ops, k.swap ? Nc : Mc,
                                                    k.swap ? Mc : Nc, em_.vmem_free())
                                     : StatusOr<std::optional<Epilogue>>(std::nullopt));
  StatusOr<std::vector<DotStep>> steps = DotSchedule(k.plan, kMaxInstructionsPerCore);
  if (!steps.ok()) return ResourceExhausted("dot %" + inst.name() + ": too many blocks");
  k.steps = *std::move(steps);
  return true;
}

Status Lowerer::AllocateDotBuffers(DotKernel& k) {
  const HloInstruction& inst = *k.inst;
  const DotShape& d = k.plan.shape;
  const DotBlocks& bl = k.plan.blocks;
  const int nin = k.plan.input_buffers;
  TPUSIM_ASSIGN_OR_RETURN(k.lhs_v0, Vmem(inst, nin * bl.Mc * bl.Kc * d.le, "LHS blocks"));
  if (k.km) {
    TPUSIM_ASSIGN_OR_RETURN(k.stage_v0, Vmem(inst, nin * bl.Mc * bl.Kc * d.le, "LHS staging"));
  }
  TPUSIM_ASSIGN_OR_RETURN(k.rhs_v0, Vmem(inst, nin * bl.Kc * bl.Nc * d.re, "weight blocks"));
  TPUSIM_ASSIGN_OR_RETURN(k.out_v0, Vmem(inst, bl.nbuf * bl.Mc * bl.Nc * d.oe, "result blocks"));
  if (k.swap) {
    TPUSIM_ASSIGN_OR_RETURN(
        k.tpose_v0, Vmem(inst, bl.nbuf * bl.Mc * bl.Nc * d.oe, "popped blocks to transpose"));
  }
  if (k.plan.ksplit > 1) {
    TPUSIM_ASSIGN_OR_RETURN(
        k.partials, Vmem(inst, k.plan.ksplit * bl.Mc * d.N * 4, "K-split partial sums"));
  }
  return OkStatus();
}

// Software pipeline: step i waits for its chunks, prefetches step i + 1's chunks into the next
// of three buffers (so the HBM transfer overlaps all of step i's matmuls and the WAR wait is on
// step i - 2, long done; with one buffer the prefetch goes after the matmuls instead), issues its
// matmuls, stores the block popped one step earlier, then pops the previous output block (its
// matmuls are done by the time step i's start, and step i's matmuls use the other accumulator
// set).
Status Lowerer::EmitDot(DotKernel& k) {
  const DotShape& d = k.plan.shape;
  const DotBlocks& bl = k.plan.blocks;
  const int nin = k.plan.input_buffers;
  const int64_t acc_sets = k.plan.acc_sets, acc_set_rows = k.plan.AccSetRows();
  const bool double_acc = acc_sets > 1;
  DotOutBlock pending_pop, pending_store;
  TPUSIM_ASSIGN_OR_RETURN(int64_t loads_pending, EmitDotLoads(k, k.steps[0]));
  int64_t out_block = 0;
  for (size_t i = 0; i < k.steps.size(); ++i) {
    const DotStep& st = k.steps[i];
    const int64_t mc = std::min(bl.Mc, d.M - st.m0), kc = std::min(bl.Kc, d.K - st.k0);
    const int64_t nc = std::min(bl.Nc, d.N - st.n0);
    em_.Wait(kDotLoadFlag, loads_pending);
    loads_pending = 0;
    const uint64_t lhs = k.lhs_buf(st.lhs_ver), rhs = k.rhs_buf(st.rhs_ver);
    if (k.km && st.load_lhs) {
      em_.Emit(isa::op::XluTranspose{.dtype = k.L->dtype,
                                     .dst = lhs,
                                     .src = k.stage_buf(st.lhs_ver),
                                     .rows = static_cast<uint64_t>(kc),
                                     .cols = static_cast<uint64_t>(mc)});
    }
    if (st.load_lhs && k.pro[0]) RunPrologueBlock(*k.pro[0], st.lhs_ver % nin, mc, kc, lhs);
    if (st.load_rhs && k.pro[1]) RunPrologueBlock(*k.pro[1], st.rhs_ver % nin, kc, nc, rhs);
    if (i + 1 < k.steps.size() && nin > 1) {
      TPUSIM_ASSIGN_OR_RETURN(loads_pending, EmitDotLoads(k, k.steps[i + 1]));
    }
    const int64_t acc0 = (out_block % acc_sets) * acc_set_rows;
    EmitDotMatmuls(k, st, acc0);
    if (i + 1 < k.steps.size() && nin == 1) {
      TPUSIM_ASSIGN_OR_RETURN(loads_pending, EmitDotLoads(k, k.steps[i + 1]));
    }
    if (pending_store.valid) {
      TPUSIM_RETURN_IF_ERROR(EmitDotStore(k, pending_store));
      pending_store.valid = false;
    }
    const bool last_k = st.k0 + bl.Kc >= d.K;
    if (pending_pop.valid && (double_acc || last_k)) {
      EmitDotPop(k, pending_pop);
      pending_store = pending_pop;
      pending_pop.valid = false;
    }
    if (last_k) {
      pending_pop = DotOutBlock{true, st.b, st.m0, st.n0, acc0, out_block++};
      if (k.epi && k.epi->sets == 2) {  // its epilogue operands load behind the matmuls
        const DotKernel::Block lb = k.DotBlock(st.m0, mc, st.n0, nc);
        TPUSIM_RETURN_IF_ERROR(LoadEpilogueBlock(*k.epi, pending_pop.block, st.b, lb.M, lb.m0,
                                                 lb.mc, lb.n0, lb.nc, lb.N_all));
      }
      if (!double_acc) {
        EmitDotPop(k, pending_pop);
        TPUSIM_RETURN_IF_ERROR(EmitDotStore(k, pending_pop));
        pending_pop.valid = false;
      }
    }
    TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
  }
  if (pending_store.valid) TPUSIM_RETURN_IF_ERROR(EmitDotStore(k, pending_store));
  if (pending_pop.valid) {
    EmitDotPop(k, pending_pop);
    TPUSIM_RETURN_IF_ERROR(EmitDotStore(k, pending_pop));
  }
  em_.Wait(kOutFlag0, k.store_count[0]);
  em_.Wait(kOutFlag0 + 1, k.store_count[1]);
  return OkStatus();
}

StatusOr<int64_t> Lowerer::LoadOperandBlock(uint64_t base, const OperandBlock& blk, int64_t eb,
                                             uint64_t dst, uint64_t flag) {
  const std::vector<int64_t> dims{blk.rc, blk.cc}, ss{blk.C * eb, eb}, ds{blk.cc * eb, eb};
  return em_.Dma(isa::Opcode::kDmaHbmToVmem,
                 base + static_cast<uint64_t>(((blk.b * blk.R + blk.r0) * blk.C + blk.c0) * eb),
                 ss, dst, ds, dims, eb, flag);
}

// Loads (HBM -> VMEM) of step `st`'s chunks that are not already in VMEM, signalling kDotLoadFlag;
// returns how many descriptors signal it.
StatusOr<int64_t> Lowerer::EmitDotLoads(const DotKernel& k, const DotStep& st) {
  const DotShape& d = k.plan.shape;
  const DotBlocks& bl = k.plan.blocks;
  const int64_t M = d.M, K = d.K, le = d.le, re = d.re;
  const int64_t mc = std::min(bl.Mc, M - st.m0), kc = std::min(bl.Kc, K - st.k0);
  const int64_t nc = std::min(bl.Nc, d.N - st.n0);
  const int nin = k.plan.input_buffers;
  int64_t n = 0;
  if (st.load_lhs && k.km) {
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t c, LoadOperandBlock(k.L->address, OperandBlock{st.b, K, M, st.k0, kc, st.m0, mc},
                                    le, k.stage_buf(st.lhs_ver), kDotLoadFlag));
    n += c;
  } else if (st.load_lhs && k.pro[0]) {
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t c, LoadPrologueBlock(*k.pro[0], st.lhs_ver % nin,
                                     OperandBlock{st.b, M, K, st.m0, mc, st.k0, kc}, kDotLoadFlag));
    n += c;
  } else if (st.load_lhs) {
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t c, LoadOperandBlock(k.L->address, OperandBlock{st.b, M, K, st.m0, mc, st.k0, kc},
                                    le, k.lhs_buf(st.lhs_ver), kDotLoadFlag));
    n += c;
  }
  const int64_t N_all = k.N_all, n0 = k.n_lo + st.n0;
  if (st.load_rhs && k.pro[1]) {
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t c,
        LoadPrologueBlock(*k.pro[1], st.rhs_ver % nin,
                          OperandBlock{st.b, K, N_all, st.k0, kc, n0, nc}, kDotLoadFlag));
    n += c;
  } else if (st.load_rhs) {
    // The RHS as stored: [N, K] (k.nk) or [K, N].
    const OperandBlock blk = k.nk ? OperandBlock{st.b, N_all, K, n0, nc, st.k0, kc}
                                  : OperandBlock{st.b, K, N_all, st.k0, kc, n0, nc};
    TPUSIM_ASSIGN_OR_RETURN(int64_t c, LoadOperandBlock(k.Rb->address, blk, re,
                                                        k.rhs_buf(st.rhs_ver), kDotLoadFlag));
    n += c;
  }
  return n;
}

// Step `st`'s matmuls: K tile -> N tile (round-robin over the MXUs, or K tile t on MXU t % ksplit)
// -> row group -> precision pass, each a load_weights and a matmul into accumulator set `acc0`.
void Lowerer::EmitDotMatmuls(const DotKernel& k, const DotStep& st, int64_t acc0) {
  const DotShape& d = k.plan.shape;
  const DotBlocks& bl = k.plan.blocks;
  const int64_t R = k.plan.mxu.rows, C = k.plan.mxu.cols, ksplit = k.plan.ksplit;
  const int64_t mc = std::min(bl.Mc, d.M - st.m0), kc = std::min(bl.Kc, d.K - st.k0);
  const int64_t nc = std::min(bl.Nc, d.N - st.n0);
  const uint64_t lhs = k.lhs_buf(st.lhs_ver), rhs = k.rhs_buf(st.rhs_ver);
  const int64_t G = k.plan.RowGroups(mc, nc);
  for (int64_t kt = 0; kt < kc; kt += R) {
    const int64_t kk = std::min(R, kc - kt);
    for (int64_t nt = 0; nt < nc; nt += C) {
      const int64_t nn = std::min(C, nc - nt);
      const int64_t j = nt / C;
      const int64_t t = kt / R;  // K tile index within the block
      const bool first = ksplit > 1 ? t < ksplit : (st.k0 == 0 && kt == 0);
      for (int64_t g = 0; g < G; ++g) {
        const DotRowUnit u = k.plan.RowUnit(j, g, G, mc);
        const uint64_t unit = ksplit > 1 ? static_cast<uint64_t>(t % ksplit) : u.mxu;
        const uint64_t acc = static_cast<uint64_t>(ksplit > 1 ? 0 : acc0 + u.acc);
        for (size_t p = 0; p < k.passes.size(); ++p) {
          em_.Emit(isa::op::MxuLoadWeights{
              .mxu = unit,
              .addr = rhs + static_cast<uint64_t>((k.nk ? nt * kc + kt : kt * nc + nt) * d.re),
              .k = static_cast<uint64_t>(kk),
              .n = static_cast<uint64_t>(nn),
              .stride = static_cast<uint64_t>(k.nk ? kc : nc),
              .dtype = k.Rb->dtype,
              .transpose = k.nk,
              .part = k.passes[p].rhs});
          em_.Emit(isa::op::MxuMatmul{.mxu = unit,
                                      .lhs = lhs + static_cast<uint64_t>((u.r0 * kc + kt) * d.le),
                                      .stride = static_cast<uint64_t>(kc),
                                      .m = static_cast<uint64_t>(u.r1 - u.r0),
                                      .k = static_cast<uint64_t>(kk),
                                      .n = static_cast<uint64_t>(nn),
                                      .dtype = k.L->dtype,
                                      .part = k.passes[p].lhs,
                                      .acc = acc,
                                      .accumulate = !(first && p == 0),
                                      .latch = true});
        }
      }
    }
  }
}

// Pops output block `pp` into result buffer pp.block % nbuf (once its previous store is done);
// with a stationary LHS into the buffer it is transposed from.
void Lowerer::EmitDotPop(DotKernel& k, const DotOutBlock& pp) {
  const int o = static_cast<int>(pp.block % k.plan.blocks.nbuf);
  em_.Wait(kOutFlag0 + static_cast<uint64_t>(o), k.store_count[o]);
  k.store_count[o] = 0;
  EmitDotPopInto(k, pp, k.pop_buf(pp.block));
}

// EmitDotPop's pops of block `pp` into the [mc, nc] block at VMEM address `out`.
void Lowerer::EmitDotPopInto(DotKernel& k, const DotOutBlock& pp, uint64_t out) {
  const DotShape& d = k.plan.shape;
  const DotBlocks& bl = k.plan.blocks;
  const int64_t C = k.plan.mxu.cols, ksplit = k.plan.ksplit;
  const int64_t mc = std::min(bl.Mc, d.M - pp.m0), nc = std::min(bl.Nc, d.N - pp.n0);
  const isa::DType acc_dtype = k.acc_dtype;
  if (ksplit == 1) {
    const int64_t G = k.plan.RowGroups(mc, nc);
    for (int64_t nt = 0; nt < nc; nt += C) {
      for (int64_t g = 0; g < G; ++g) {
        const DotRowUnit u = k.plan.RowUnit(nt / C, g, G, mc);
        em_.Emit(isa::op::MxuPop{.mxu = u.mxu,
                                 .acc = static_cast<uint64_t>(pp.acc0 + u.acc),
                                 .m = static_cast<uint64_t>(u.r1 - u.r0),
                                 .n = static_cast<uint64_t>(std::min(C, nc - nt)),
                                 .acc_dtype = acc_dtype,
                                 .dst = out + static_cast<uint64_t>((u.r0 * nc + nt) * d.oe),
                                 .stride = static_cast<uint64_t>(nc),
                                 .dtype = k.O->dtype,
                                 .act = k.pop_act ? k.pop_act->act : isa::Activation::kNone});
      }
    }
    return;
  }
  // K split: pop each MXU's partial [mc, nc] sums, add them in MXU order, convert to the result
  // type.
  const int64_t words = mc * nc;
  for (int64_t q = 0; q < ksplit; ++q) {
    em_.Emit(isa::op::MxuPop{.mxu = static_cast<uint64_t>(q),
                             .acc = 0,
                             .m = static_cast<uint64_t>(mc),
                             .n = static_cast<uint64_t>(nc),
                             .acc_dtype = acc_dtype,
                             .dst = k.partials + static_cast<uint64_t>(q * bl.Mc * d.N * 4),
                             .stride = static_cast<uint64_t>(nc),
                             .dtype = acc_dtype,
                             .act = isa::Activation::kNone});
  }
  for (int64_t q = 1; q < ksplit; ++q) {
    const bool last = q == ksplit - 1 && k.O->dtype == acc_dtype;
    em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kAdd,
                                .dtype = acc_dtype,
                                .dst = last ? out : k.partials,
                                .a = k.partials,
                                .b = k.partials + static_cast<uint64_t>(q * bl.Mc * d.N * 4),
                                .rows = 1,
                                .cols = static_cast<uint64_t>(words)});
  }
  if (k.O->dtype != acc_dtype) {
    em_.Emit(isa::op::VpuConvert{.src_dtype = acc_dtype,
                                 .dtype = k.O->dtype,
                                 .dst = out,
                                 .src = k.partials,
                                 .count = static_cast<uint64_t>(words)});
  }
}

// Stores the popped block `pp` (VMEM -> HBM), after running the epilogue on it. Issued one step
// after its pops, so the sequencer does not wait for the pops (behind the MXUs' queued matmuls)
// before issuing the next matmuls.
Status Lowerer::EmitDotStore(DotKernel& k, const DotOutBlock& pp) {
  const DotShape& d = k.plan.shape;
  const DotBlocks& bl = k.plan.blocks;
  const int64_t oe = d.oe;
  const DotKernel::Block lb = k.DotBlock(pp.m0, std::min(bl.Mc, d.M - pp.m0), pp.n0,
                                         std::min(bl.Nc, d.N - pp.n0));
  const int64_t M = lb.M, N_all = lb.N_all, mc = lb.mc, nc = lb.nc;
  const int o = static_cast<int>(pp.block % bl.nbuf);
  const uint64_t out = k.out_buf(pp.block);
  if (k.swap) {  // the popped [nc, mc] block becomes the dot's [mc, nc] block
    em_.Emit(isa::op::XluTranspose{.dtype = k.O->dtype,
                                   .dst = out,
                                   .src = k.pop_buf(pp.block),
                                   .rows = static_cast<uint64_t>(nc),
                                   .cols = static_cast<uint64_t>(mc)});
  }
  if (k.epi) {
    TPUSIM_RETURN_IF_ERROR(RunEpilogue(*k.inst, *k.epi, out, k.O->dtype, pp.b, M, lb.m0, mc,
                                       lb.n0, nc, N_all));
    if (!k.epi->store_dot) {
      k.store_count[o] = 0;
      return em_.CheckSize();
    }
  }
  const std::vector<int64_t> dims{mc, nc}, ss{nc * oe, oe}, ds{N_all * oe, oe};
  TPUSIM_ASSIGN_OR_RETURN(
      k.store_count[o],
      em_.Dma(isa::Opcode::kDmaVmemToHbm, out, ss,
              k.O->address + static_cast<uint64_t>(((pp.b * M + lb.m0) * N_all + lb.n0) * oe),
              ds, dims, oe, kOutFlag0 + static_cast<uint64_t>(o)));
  if (bl.nbuf == 1) {
    em_.Wait(kOutFlag0, k.store_count[0]);
    k.store_count[0] = 0;
  }
  return em_.CheckSize();
}

bool Lowerer::AllocateEpilogue(const HloInstruction& dot, Epilogue& ep, int64_t Mc, int64_t Nc,
                               int64_t budget, int64_t tmp_bytes, bool needs_zero) {
  // Per buffer set: the non-scalar externals' blocks and the ops' result blocks; shared: scalars,
  // absorbed broadcasts' whole operands, running reductions, the temporary.
  const auto rounded = [](int64_t bytes) { return (std::max<int64_t>(bytes, 64) + 63) / 64 * 64; };
  const auto ext_block_bytes = [&](const Epilogue::External& x) {
    const int64_t elems = x.mode == isa::Broadcast::kScalar ? 1
                          : x.mode == isa::Broadcast::kRow  ? Nc
                          : x.mode == isa::Broadcast::kCol  ? Mc
                                                            : Mc * Nc;
    return rounded(elems * x.buf->elem_bytes());
  };
  int64_t per_set = 0, shared = 0, wholes = 0, absorbed_blocks = 0;
  for (Epilogue::External& x : ep.ext) {
    if (x.repeat > 0) {  // whole (shared) or one value per block (per set): decided below
      wholes += rounded(x.buf->bytes());
      absorbed_blocks += ext_block_bytes(x);
      continue;
    }
    (x.LoadedOnce() ? shared : per_set) += ext_block_bytes(x);
  }
  for (size_t m = 0; m < ep.ops.size(); ++m) {
    if (IsAbsorbedBroadcast(dot, *ep.ops[m])) continue;
    if (ep.ops[m]->opcode() == hlo::HloOpcode::kReduce) {
      const auto& dims = ep.ops[m]->dimensions();
      const bool column =
          std::find(dims.begin(), dims.end(), dot.shape().rank() - 1) == dims.end();
      shared += rounded((column ? ep.ops[m]->shape().ElementCount() : Mc) * 4);
      continue;
    }
    per_set += rounded(Mc * Nc * Buffer(ep.ops[m]).elem_bytes());
  }
  shared += (tmp_bytes > 0 ? rounded(Mc * Nc * tmp_bytes) : 0) + (needs_zero ? 64 : 0);
  const bool whole = shared + wholes + per_set <= budget;
  (whole ? shared : per_set) += whole ? wholes : absorbed_blocks;
  ep.sets = shared + 2 * per_set <= budget ? 2 : 1;
  if (shared + per_set > budget) return false;
  auto alloc = [&](int64_t bytes, uint64_t* at) {
    const int64_t a = em_.AllocVmem(std::max<int64_t>(bytes, 64));
    if (a < 0) return false;
    *at = static_cast<uint64_t>(a);
    return true;
  };
  for (Epilogue::External& x : ep.ext) {
    x.whole = whole && x.repeat > 0;
    const int64_t bytes = x.whole ? rounded(x.buf->bytes()) : ext_block_bytes(x);
    x.set_bytes = x.LoadedOnce() ? 0 : static_cast<uint64_t>(bytes);
    if (!alloc(x.LoadedOnce() ? bytes : bytes * ep.sets, &x.vmem)) return false;
  }
  ep.result.resize(ep.ops.size());
  ep.result_set_bytes.assign(ep.ops.size(), 0);
  for (size_t m = 0; m < ep.ops.size(); ++m) {
    if (IsAbsorbedBroadcast(dot, *ep.ops[m])) continue;
    if (ep.ops[m]->opcode() == hlo::HloOpcode::kReduce) {
      // Reductions keep a running result ([N] columns or [Mc] rows).
      Epilogue::Reduction r;
      const auto& dims = ep.ops[m]->dimensions();
      r.column = std::find(dims.begin(), dims.end(), dot.shape().rank() - 1) == dims.end();
      r.op = ReducerOp(*ep.ops[m]).value_or(isa::ReduceOp::kSum);
      const int64_t n = r.column ? ep.ops[m]->shape().ElementCount() : Mc;
      if (!alloc(n * 4, &r.running)) return false;
      ep.reductions[m] = r;
      continue;
    }
    const int64_t bytes = rounded(Mc * Nc * Buffer(ep.ops[m]).elem_bytes());
    ep.result_set_bytes[m] = static_cast<uint64_t>(bytes);
    if (!alloc(bytes * ep.sets, &ep.result[m])) return false;
  }
  if (tmp_bytes > 0 && !alloc(Mc * Nc * tmp_bytes, &ep.tmp)) return false;
  if (needs_zero && !alloc(64, &ep.zero)) return false;
  return true;
}

StatusOr<std::optional<Lowerer::Epilogue>> Lowerer::PlanEpilogue(
    const HloInstruction& dot, const std::vector<const HloInstruction*>& ops, int64_t Mc,
    int64_t Nc, int64_t budget) {
  Epilogue ep;
  ep.ops = ops;
  auto member_index = [&](const HloInstruction* i) -> int64_t {
    auto it = std::find(ops.begin(), ops.end(), i);
    return it == ops.end() ? -1 : static_cast<int64_t>(it - ops.begin());
  };
  std::map<std::tuple<uint64_t, isa::Broadcast, int64_t>, size_t> ext_index;
  bool needs_tmp = false, needs_zero = false;
  ep.source.resize(ops.size());
  for (size_t m = 0; m < ops.size(); ++m) {
    const HloInstruction& op_inst = *ops[m];
    if (IsAbsorbedBroadcast(dot, op_inst)) continue;  // read by its users, per block
    needs_tmp = needs_tmp || op_inst.opcode() == hlo::HloOpcode::kClamp ||
                op_inst.opcode() == hlo::HloOpcode::kIsFinite;
    needs_zero = needs_zero || op_inst.opcode() == hlo::HloOpcode::kIsFinite;
    for (const HloInstruction* op : op_inst.operands()) {
      if (op == &dot || (Buffer(op).address == Buffer(&dot).address &&
                         op->shape().ElementCount() == dot.shape().ElementCount())) {
        ep.source[m].push_back(kEpilogueDotBlock);  // the dot or a view of it
        continue;
      }
      const bool absorbed = member_index(op) >= 0 && IsAbsorbedBroadcast(dot, *op);
      if (const int64_t mi = member_index(op); mi >= 0 && !absorbed) {
        ep.source[m].push_back(mi);
        continue;
      }
      // An absorbed broadcast: one value of its operand per block (fusion.h).
      const HbmBuffer& b = Buffer(absorbed ? op->operand(0) : op);
      isa::Broadcast mode = absorbed ? isa::Broadcast::kScalar : VirtualBroadcastKind(*op);
      if (mode == isa::Broadcast::kNone && b.elements() == 1) mode = isa::Broadcast::kScalar;
      const int64_t repeat = absorbed ? op->shape().ElementCount() / b.elements() : 0;
      auto [it, inserted] = ext_index.try_emplace({b.address, mode, repeat}, ep.ext.size());
      if (inserted) ep.ext.push_back({&b, mode, 0, repeat});
      ep.source[m].push_back(-2 - static_cast<int64_t>(it->second));
    }
  }
  // An epilogue that does not fit is left to the ops' own kernels.
  if (!AllocateEpilogue(dot, ep, Mc, Nc, budget, needs_tmp ? 4 : 0, needs_zero)) {
    return std::optional<Epilogue>();
  }
  // Results read outside the epilogue are stored; so is the dot's when anything else reads it.
  const HloInstruction* root = dot.parent()->root_instruction();
  ep.stored.assign(ops.size(), false);
  for (size_t m = 0; m < ops.size(); ++m) {
    // Reductions are stored by ReduceEpilogueBlock / FinishEpilogue; absorbed broadcasts never.
    if (ep.reductions.count(m) > 0 || IsAbsorbedBroadcast(dot, *ops[m])) continue;
    ep.stored[m] = ops[m] == root || ops[m]->users().empty();
    for (const HloInstruction* u : ops[m]->users())
      ep.stored[m] = ep.stored[m] || member_index(u) < 0;
  }
  // Read outside: by a non-member, directly or through a view (a reshape or bitcast alias).
  std::function<bool(const HloInstruction&)> read_outside = [&](const HloInstruction& v) {
    if (&v == root) return true;
    for (const HloInstruction* u : v.users()) {
      if (member_index(u) >= 0) continue;
      if (!IsAliasOfOperand(*u) || read_outside(*u)) return true;
    }
    return false;
  };
  ep.store_dot = read_outside(dot);
  // Scalars, and absorbed broadcasts' whole operands, are loaded once.
  int64_t loads = 0;
  for (const Epilogue::External& x : ep.ext) {
    if (!x.LoadedOnce()) continue;
    const int64_t bytes = x.whole ? x.buf->bytes() : x.buf->elem_bytes();
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, x.buf->address, x.vmem, bytes,
                      x.buf->elem_bytes(), kLoadFlag);
    ++loads;
  }
  em_.Wait(kLoadFlag, loads);
  // Running column results start at the init value (the reduce order: lower_reduce.cc).
  for (auto& [m, r] : ep.reductions) {
    const auto& src = ep.source[m];
    r.init = ep.ext[static_cast<size_t>(-2 - src[1])].vmem;
    if (r.column) {
      em_.Emit(RunningResultsFromInit(isa::DType::kF32, r.running, r.init,
                                      ops[m]->shape().ElementCount()));
    }
  }
  return std::optional<Epilogue>(std::move(ep));
}

Status Lowerer::ReduceEpilogueBlock(const HloInstruction& reduce, Epilogue::Reduction& r,
                                    uint64_t src, int64_t b, int64_t M, int64_t m0, int64_t mc,
                                    int64_t n0, int64_t nc, int64_t N, uint64_t store_flag,
                                    int64_t* stores) {
  if (r.column) {  // the block's rows folded into the running [N] results, in row order
    em_.Emit(ReduceInto(r.op, isa::ReduceAxis::kSublanes, isa::DType::kF32,
                        r.running + static_cast<uint64_t>(n0 * 4), src, mc, nc));
    return OkStatus();
  }
  // Row results over the N blocks of this M block: they start at the init value with the first;
  // the last stores them.
  if (n0 == 0) em_.Emit(RunningResultsFromInit(isa::DType::kF32, r.running, r.init, mc));
  em_.Emit(ReduceInto(r.op, isa::ReduceAxis::kLanes, isa::DType::kF32, r.running, src, mc, nc));
  if (n0 + nc < N) return OkStatus();
  em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, r.running,
                    Buffer(&reduce).address + static_cast<uint64_t>((b * M + m0) * 4), mc * 4, 4,
                    store_flag);
  ++*stores;
  return OkStatus();
}

Status Lowerer::CloseEpilogue(const HloInstruction& dot, bool folded_into_pops, Epilogue* ep) {
  if (folded_into_pops) {
    for (const HloInstruction* m : groups_.epilogue_of_dot.at(&dot)) epilogue_done_.insert(m);
  }
  auto e = groups_.epilogue_of_dot.find(&dot);
  if (!folded_into_pops && ep == nullptr && e != groups_.epilogue_of_dot.end()) {
    // The epilogue did not run (it did not fit, or the dot is split): its ops get kernels of their
    // own after the dot, so the broadcasts it would have absorbed are materialized now.
    for (const HloInstruction* m : e->second) {
      if (!IsAbsorbedBroadcast(dot, *m)) continue;
      em_.set_tag(TagOf(*m));
      em_.ResetVmem();
      em_.set_hbm_arrays(KernelHbmArrays(*m));
      TPUSIM_RETURN_IF_ERROR(LowerBroadcast(*m));
      epilogue_done_.insert(m);
    }
    em_.set_tag(TagOf(dot));
  }
  if (ep == nullptr) return OkStatus();
  TPUSIM_RETURN_IF_ERROR(FinishEpilogue(dot, *ep));
  for (int set = 0; set < 2; ++set) {
    em_.Wait(kEpilogueStoreFlag0 + static_cast<uint64_t>(set), ep->pending_stores[set]);
  }
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
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, r.running, Buffer(&reduce).address, n * 4, 4,
                      kEpilogueStoreFlag0);
    ++ep.pending_stores[0];
  }
  em_.set_tag(TagOf(dot));
  return OkStatus();
}

Status Lowerer::LoadEpilogueBlock(Epilogue& ep, int64_t seq, int64_t b, int64_t M, int64_t m0,
                                  int64_t mc, int64_t n0, int64_t nc, int64_t N) {
  const int set = ep.Set(seq);
  const uint64_t flag = kEpilogueLoadFlag0 + static_cast<uint64_t>(set);
  int64_t loads = 0;
  const OperandBlock blk{b, M, N, m0, mc, n0, nc};
  for (const Epilogue::External& x : ep.ext) {
    const uint64_t at = x.At(set);
    if (x.mode == isa::Broadcast::kScalar && x.repeat > 0 && !x.whole) {
      // The one value of an absorbed broadcast for this block.
      const int64_t e = x.buf->elem_bytes(), i = ((b * M + m0) * N + n0) / x.repeat;
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, x.buf->address + static_cast<uint64_t>(i * e),
                        at, e, e, flag);
      ++loads;
    }
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, LoadExternalBlock(x, blk, at, flag));
    loads += n;
  }
  ep.pending_loads[set] += loads;
  ep.loaded[set] = true;
  return OkStatus();
}

Status Lowerer::RunEpilogue(const HloInstruction& dot, Epilogue& ep, uint64_t block,
                            isa::DType block_dtype, int64_t b, int64_t M, int64_t m0, int64_t mc,
                            int64_t n0, int64_t nc, int64_t N) {
  const int set = ep.Set(ep.next_block);
  if (!ep.loaded[set]) {
    TPUSIM_RETURN_IF_ERROR(LoadEpilogueBlock(ep, ep.next_block, b, M, m0, mc, n0, nc, N));
  }
  em_.Wait(kEpilogueLoadFlag0 + static_cast<uint64_t>(set), ep.pending_loads[set]);
  ep.pending_loads[set] = 0;
  ep.loaded[set] = false;
  ++ep.next_block;
  // This set's previous results (two blocks ago) must be stored before they are overwritten.
  const uint64_t store_flag = kEpilogueStoreFlag0 + static_cast<uint64_t>(set);
  em_.Wait(store_flag, ep.pending_stores[set]);
  ep.pending_stores[set] = 0;
  const int32_t dot_tag = TagOf(dot);
  for (size_t m = 0; m < ep.ops.size(); ++m) {
    const HloInstruction& op_inst = *ep.ops[m];
    if (IsAbsorbedBroadcast(dot, op_inst)) continue;
    em_.set_tag(TagOf(op_inst));
    std::vector<VpuOperand> vops;
    for (int64_t src : ep.source[m]) {
      if (src == kEpilogueDotBlock) {
        vops.push_back({block, isa::Broadcast::kNone, block_dtype});
      } else if (src >= 0) {
        const size_t i = static_cast<size_t>(src);
        vops.push_back({ep.result[i] + static_cast<uint64_t>(set) * ep.result_set_bytes[i],
                        isa::Broadcast::kNone, Buffer(ep.ops[i]).dtype});
      } else {
        const Epilogue::External& x = ep.ext[static_cast<size_t>(-2 - src)];
        uint64_t at = x.At(set);
        if (x.whole) {  // the absorbed broadcast's value for this block, in place
          at += static_cast<uint64_t>(((b * M + m0) * N + n0) / x.repeat * x.buf->elem_bytes());
        }
        vops.push_back({at, x.mode, x.buf->dtype});
      }
    }
    if (auto red = ep.reductions.find(m); red != ep.reductions.end()) {
      TPUSIM_RETURN_IF_ERROR(ReduceEpilogueBlock(op_inst, red->second, vops[0].vmem, b, M, m0, mc,
                                                 n0, nc, N, store_flag, &ep.pending_stores[set]));
      continue;
    }
    const HbmBuffer& out = Buffer(&op_inst);
    if (op_inst.opcode() == hlo::HloOpcode::kIsFinite) {
      em_.Emit(isa::op::VpuFill{.dtype = vops[0].dtype, .dst = ep.zero, .count = 1, .value = 0});
    }
    const uint64_t result = ep.result[m] + static_cast<uint64_t>(set) * ep.result_set_bytes[m];
    EmitVpuOp(op_inst, out.dtype, vops, result, ep.tmp, ep.zero, static_cast<uint64_t>(mc),
              static_cast<uint64_t>(nc), static_cast<uint64_t>(mc * nc));
    if (ep.stored[m]) {
      const int64_t e = out.elem_bytes();
      const std::vector<int64_t> dims{mc, nc}, ss{nc * e, e}, ds{N * e, e};
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t n, em_.Dma(isa::Opcode::kDmaVmemToHbm, result, ss,
                             out.address + static_cast<uint64_t>(((b * M + m0) * N + n0) * e), ds,
                             dims, e, store_flag));
      ep.pending_stores[set] += n;
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
