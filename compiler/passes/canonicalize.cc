#include "compiler/passes/canonicalize.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "common/check.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/loop_region.h"
#include "compiler/passes/data_formatting.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace tpusim::compiler {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

std::string UniqueName(const HloComputation& comp, const std::string& base) {
  return comp.UniqueName(base);
}

// Inserts `inst` before `anchor`, copying the anchor's location and metadata (so diagnostics and
// reports still point at the user's instruction).
HloInstruction* Insert(HloComputation& comp, std::unique_ptr<HloInstruction> inst,
                       const HloInstruction* anchor) {
  inst->set_location(anchor->location());
  inst->mutable_metadata() = anchor->metadata();
  return comp.AddInstructionBefore(std::move(inst), anchor);
}

HloInstruction* MakeTranspose(HloComputation& comp, HloInstruction* operand,
                              const std::vector<int64_t>& perm, const HloInstruction* anchor,
                              const std::string& name) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(operand->shape().dimensions(p));
  auto t = std::make_unique<HloInstruction>(
      HloOpcode::kTranspose, Shape(operand->shape().element_type(), dims), UniqueName(comp, name));
  t->mutable_dimensions() = perm;
  t->set_has_dimensions(true);
  t->AppendOperand(operand);
  return Insert(comp, std::move(t), anchor);
}

HloInstruction* MakeReshape(HloComputation& comp, HloInstruction* operand, Shape shape,
                            const HloInstruction* anchor, const std::string& name) {
  auto r = std::make_unique<HloInstruction>(HloOpcode::kReshape, std::move(shape),
                                            UniqueName(comp, name));
  r->AppendOperand(operand);
  return Insert(comp, std::move(r), anchor);
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dimensions(d);
  return p;
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Folds `transpose` operands of `dot` into its dimension numbers when the free dimensions keep
// their relative order (the dot's output dimension order is unchanged). Returns true if it folded
// one.
bool FoldTransposes(HloInstruction* dot) {
  bool changed = false;
  for (int64_t side = 0; side < 2; ++side) {
    HloInstruction* t = dot->operand(side);
    if (t->opcode() != HloOpcode::kTranspose) continue;
    const std::vector<int64_t>& perm = t->dimensions();
    auto& dn = dot->mutable_dot_dimension_numbers();
    auto& batch = side == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
    auto& contracting = side == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
    std::vector<int64_t> free = FreeDims(t->shape().rank(), batch, contracting);
    bool ordered = true;
    for (size_t i = 1; i < free.size(); ++i) {
      ordered =
          ordered && perm[static_cast<size_t>(free[i - 1])] < perm[static_cast<size_t>(free[i])];
    }
    if (!ordered) continue;
    for (auto& d : batch) d = perm[static_cast<size_t>(d)];
    for (auto& d : contracting) d = perm[static_cast<size_t>(d)];
    dot->ReplaceOperandWith(side, t->operand(0));
    changed = true;
  }
  return changed;
}

// XLA's TPU backend states in a dot's result layout which operand the MXU held stationary: the
// array writes the stationary operand's free dimension across its columns, which become the lanes
// (the minor dimension) of the result's tiles. A result whose minor-most dimension of size > 1 is
// an LHS free dimension (Mask R-CNN's `bf16[4,512,7,256,168]{3,4,2,1,0}`, GNMT's
// `f32[12288,32316]{0,1}`) was computed with the LHS as the weights and the RHS streamed; the dot
// is marked so (kDotStationaryLhsAttribute) and the kernel takes that orientation
// (lower_dot.cc). Not for a matrix-vector product (M or N of 1): its orientation is not a choice.
bool MarkStationaryLhs(HloInstruction* dot) {
  const Shape& s = dot->shape();
  if (!s.has_layout() || s.rank() == 0) return false;
  const auto& dn = dot->dot_dimension_numbers();
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  const std::vector<int64_t> lfree =
      FreeDims(ls.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rfree =
      FreeDims(rs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  if (Product(ls, lfree) <= 1 || Product(rs, rfree) <= 1) return false;
  const auto nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  const auto nl = static_cast<int64_t>(lfree.size());
  for (const int64_t d : s.layout().minor_to_major) {
    if (s.dimensions()[static_cast<size_t>(d)] <= 1) continue;
    if (d < nb || d >= nb + nl) return false;
    dot->mutable_frontend_attributes().emplace_back(std::string(kDotStationaryLhsAttribute),
                                                    "true");
    return true;
  }
  return false;
}

bool DotMarked(const HloInstruction* dot) {
  for (const auto& [key, value] : dot->frontend_attributes()) {
    if (key == kDotStationaryLhsAttribute) return true;
  }
  return false;
}

bool IsCanonicalDot(const HloInstruction* dot) {
  const auto& dn = dot->dot_dimension_numbers();
  const Shape& l = dot->operand(0)->shape();
  const Shape& r = dot->operand(1)->shape();
  const bool batched = !dn.lhs_batch_dimensions.empty();
  const int64_t rank = batched ? 3 : 2;
  if (l.rank() != rank || r.rank() != rank || dn.lhs_contracting_dimensions.size() != 1 ||
      dn.rhs_contracting_dimensions.size() != 1) {
    return false;
  }
  if (batched && (dn.lhs_batch_dimensions != std::vector<int64_t>{0} ||
                  dn.rhs_batch_dimensions != std::vector<int64_t>{0})) {
    return false;
  }
  const int64_t rc = dn.rhs_contracting_dimensions[0];
  const int64_t lc = dn.lhs_contracting_dimensions[0];
  return (lc == rank - 1 || lc == rank - 2) && (rc == rank - 2 || rc == rank - 1) &&
         dot->shape().rank() == rank;
}

// Rewrites one non-canonical dot. Returns the new dot.
void CanonicalizeDot(HloComputation& comp, HloInstruction* dot) {
  const auto dn = dot->dot_dimension_numbers();
  HloInstruction* lhs = dot->operand(0);
  HloInstruction* rhs = dot->operand(1);
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  const std::vector<int64_t> lfree =
      FreeDims(ls.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rfree =
      FreeDims(rs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const int64_t b = Product(ls, dn.lhs_batch_dimensions);
  const int64_t m = Product(ls, lfree);
  const int64_t k = Product(ls, dn.lhs_contracting_dimensions);
  const int64_t n = Product(rs, rfree);
  const bool batched = !dn.lhs_batch_dimensions.empty();
  const std::string base = dot->name();  // a copy: `dot` is removed below

  // LHS -> [B,M,K], or [B,K,M] when it already is (contracting before free dimensions): the dot
  // kernel transposes such LHS blocks on the XLU in VMEM, as XLA's TPU backend does, instead of a
  // whole-array transpose through HBM.
  std::vector<int64_t> lperm =
      Concat(dn.lhs_batch_dimensions, lfree, dn.lhs_contracting_dimensions);
  const bool lhs_km =
      !IsIdentity(lperm) &&
      IsIdentity(Concat(dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions, lfree));
  if (!IsIdentity(lperm) && !lhs_km) {
    lhs = MakeTranspose(comp, lhs, lperm, dot, base + ".lhs_transpose");
  }
  std::vector<int64_t> ldims = batched ? std::vector<int64_t>{b, m, k} : std::vector<int64_t>{m, k};
  if (lhs_km) ldims = batched ? std::vector<int64_t>{b, k, m} : std::vector<int64_t>{k, m};
  if (lhs->shape().dimensions() != ldims) {
    lhs = MakeReshape(comp, lhs, Shape(ls.element_type(), ldims), dot, base + ".lhs_reshape");
  }
  // RHS -> [B,K,N] or [B,N,K], whichever needs no transpose.
  std::vector<int64_t> kn = Concat(dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions, rfree);
  std::vector<int64_t> nk = Concat(dn.rhs_batch_dimensions, rfree, dn.rhs_contracting_dimensions);
  bool use_nk = false;
  if (IsIdentity(nk) && !IsIdentity(kn)) {
    use_nk = true;
  } else if (!IsIdentity(kn)) {
    rhs = MakeTranspose(comp, rhs, kn, dot, base + ".rhs_transpose");
  }
  std::vector<int64_t> rdims;
  if (batched) rdims.push_back(b);
  if (use_nk) {
    rdims.push_back(n);
    rdims.push_back(k);
  } else {
    rdims.push_back(k);
    rdims.push_back(n);
  }
  if (rhs->shape().dimensions() != rdims) {
    rhs = MakeReshape(comp, rhs, Shape(rs.element_type(), rdims), dot, base + ".rhs_reshape");
  }

  std::vector<int64_t> odims = batched ? std::vector<int64_t>{b, m, n} : std::vector<int64_t>{m, n};
  auto nd = std::make_unique<HloInstruction>(
      HloOpcode::kDot, Shape(dot->shape().element_type(), odims), UniqueName(comp, base + ".mxu"));
  nd->AppendOperand(lhs);
  nd->AppendOperand(rhs);
  auto& ndn = nd->mutable_dot_dimension_numbers();
  const int64_t rank = batched ? 3 : 2;
  if (batched) {
    ndn.lhs_batch_dimensions = {0};
    ndn.rhs_batch_dimensions = {0};
  }
  ndn.lhs_contracting_dimensions = {lhs_km ? rank - 2 : rank - 1};
  ndn.rhs_contracting_dimensions = {use_nk ? rank - 1 : rank - 2};
  nd->mutable_precision_config() = dot->precision_config();
  nd->mutable_frontend_attributes() = dot->frontend_attributes();
  nd->set_sharding(dot->sharding());
  HloInstruction* new_dot = Insert(comp, std::move(nd), dot);
  HloInstruction* result = new_dot;
  if (dot->shape().dimensions() != odims) {
    result = MakeReshape(comp, new_dot, dot->shape(), dot, base + ".result_reshape");
    // The reshape has the dot's shape, so it carries the dot's sharding (for a root: the module's
    // output sharding, SpmdSignature::Of).
    result->set_sharding(dot->sharding());
  } else if (dot->shape().has_layout()) {
    new_dot->mutable_shape() = dot->shape();
  }
  dot->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(dot);
  new_dot->set_name(base);
}

bool IsNoOp(const HloInstruction* inst) {
  switch (inst->opcode()) {
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return !MovesData(*inst) && inst->shape().IsArray() &&
             inst->operand(0)->shape().IsArray() &&
             inst->shape().element_type() == inst->operand(0)->shape().element_type() &&
             inst->shape().dimensions() == inst->operand(0)->shape().dimensions();
    case HloOpcode::kCopy:  // unless it moves data (data_formatting.h)
      return !MovesData(*inst);
    default:
      return false;
  }
}

bool IsRemovableWhenDead(const HloInstruction* inst) {
  switch (inst->opcode()) {
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTranspose:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
      return true;
    default:
      return false;
  }
}

// The integer values of a constant (nullopt for anything else).
std::optional<std::vector<int64_t>> IntValues(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kConstant || !i->shape().IsArray() || i->literal().elided ||
      static_cast<int64_t>(i->literal().int_values.size()) != i->shape().ElementCount()) {
    return std::nullopt;
  }
  return i->literal().int_values;
}

// The static slice a gather or dynamic-slice with constant start indices reads, as XLA computes it
// (each start clamped into [0, dim - size]); nullopt when the starts are not constants or the
// gather is not one box of the operand in its own dimension order.
std::optional<std::vector<int64_t>> StaticStarts(const HloInstruction* inst) {
  if ((inst->opcode() != HloOpcode::kDynamicSlice && inst->opcode() != HloOpcode::kGather) ||
      inst->operand_count() < 2) {
    return std::nullopt;
  }
  const Shape& in = inst->operand(0)->shape();
  if (!in.IsArray() || !inst->shape().IsArray()) return std::nullopt;
  const int64_t rank = in.rank();
  std::vector<int64_t> starts(static_cast<size_t>(rank), 0), sizes;
  if (inst->opcode() == HloOpcode::kDynamicSlice) {
    if (inst->operand_count() != rank + 1) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d) {
      auto v = IntValues(inst->operand(d + 1));
      if (!v || v->size() != 1) return std::nullopt;
      starts[static_cast<size_t>(d)] = (*v)[0];
    }
    sizes = inst->dynamic_slice_sizes();
  } else if (inst->opcode() == HloOpcode::kGather && inst->operand_count() == 2) {
    const hlo::GatherDimensionNumbers& g = inst->gather_dimension_numbers();
    auto v = IntValues(inst->operand(1));
    const Shape& idx = inst->operand(1)->shape();
    // One start vector: indices of shape [n] with index_vector_dim = 0.
    if (!v || idx.rank() != 1 || g.index_vector_dim != 0 || !g.collapsed_slice_dims.empty() ||
        !g.operand_batching_dims.empty() || !g.start_indices_batching_dims.empty() ||
        static_cast<int64_t>(g.offset_dims.size()) != rank ||
        g.start_index_map.size() != v->size()) {
      return std::nullopt;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (g.offset_dims[static_cast<size_t>(d)] != d) return std::nullopt;
    }
    for (size_t k = 0; k < v->size(); ++k) {
      const int64_t d = g.start_index_map[k];
      if (d < 0 || d >= rank) return std::nullopt;
      starts[static_cast<size_t>(d)] = (*v)[k];
    }
    sizes = inst->gather_slice_sizes();
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(sizes.size()) != rank || inst->shape().dimensions() != sizes) {
    return std::nullopt;
  }
  for (int64_t d = 0; d < rank; ++d) {
    const size_t u = static_cast<size_t>(d);
    starts[u] = std::clamp<int64_t>(starts[u], 0, in.dimensions(d) - sizes[u]);
  }
  return starts;
}

// gather / dynamic-slice with constant starts -> slice (a strided DMA instead of an index load and
// an indirect one; contiguous slices then cost nothing, lowerer.h IsAliasOfOperand).
bool StaticSliceFromConstantStarts(HloComputation& comp, HloInstruction* inst) {
  const std::optional<std::vector<int64_t>> starts = StaticStarts(inst);
  if (!starts) return false;
  auto s = std::make_unique<HloInstruction>(HloOpcode::kSlice, inst->shape(),
                                            UniqueName(comp, inst->name() + ".static"));
  std::vector<int64_t> limits;
  for (size_t d = 0; d < starts->size(); ++d) {
    limits.push_back((*starts)[d] + inst->shape().dimensions(static_cast<int64_t>(d)));
  }
  s->mutable_slice_starts() = *starts;
  s->mutable_slice_limits() = limits;
  s->mutable_slice_strides() = std::vector<int64_t>(starts->size(), 1);
  s->AppendOperand(inst->operand(0));
  HloInstruction* slice = Insert(comp, std::move(s), inst);
  inst->ReplaceAllUsesWith(slice);
  comp.RemoveInstruction(inst);
  return true;
}

// The earliest place for an instruction computed from `x` alone that `user` reads: just after x,
// but never before a loop region marker between them (no pass moves code across one).
const HloInstruction* EarliestAfter(const HloComputation& comp, const HloInstruction* x,
                                    const HloInstruction* user) {
  const auto& insts = comp.instructions();
  size_t at = 0;
  while (at < insts.size() && insts[at].get() != user) ++at;
  while (at > 0) {
    const HloInstruction* prev = insts[at - 1].get();
    if (prev == x || IsLoopMarker(*prev)) break;
    --at;
  }
  return insts[at].get();
}

// broadcast(x) along a run of middle dimensions [d0, d1] (d0 > 0, d1 < rank - 1), read only by
// elementwise ops -> broadcast(broadcast(x) along [d0, d1] into the leading dimensions, one value
// per row) along the leading dimensions. The outer broadcast is a per-row column its readers take
// as they stream (lower/hbm_plan.cc, VirtualBroadcastKind kCol); only the [rows] column is
// materialized, not the last dimension's copies (a per-channel scale of an image in
// [H, W, C, N] order: [H, W, C] values instead of [H, W, C, N]). The column is computed right
// after x, so that it does not split a run of elementwise ops that read it into two loop-fusion
// kernels (fusion.h, FormElementwiseGroups: a scale-and-shift x * s + b with two such columns is
// one kernel, as XLA's loop fusion makes it).
bool SplitMiddleBroadcast(HloComputation& comp, HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kBroadcast || !inst->shape().IsArray() ||
      inst == comp.root_instruction() || inst->users().empty()) {
    return false;
  }
  const Shape& out = inst->shape();
  const int64_t rank = out.rank();
  const std::vector<int64_t>& dims = inst->dimensions();
  if (rank < 3 || dims.empty() || dims.front() == 0 || dims.back() >= rank - 1 ||
      out.dimensions(rank - 1) < 2) {
    return false;
  }
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != dims[i - 1] + 1) return false;  // one contiguous run, in order
  }
  for (const HloInstruction* user : inst->users()) {
    if (!hlo::IsElementwise(user->opcode()) || user->shape().dimensions() != out.dimensions()) {
      return false;
    }
  }
  std::vector<int64_t> rows(out.dimensions().begin(), out.dimensions().end() - 1);
  std::vector<int64_t> leading(static_cast<size_t>(rank - 1));
  for (size_t i = 0; i < leading.size(); ++i) leading[i] = static_cast<int64_t>(i);
  auto column = std::make_unique<HloInstruction>(
      HloOpcode::kBroadcast, Shape(out.element_type(), rows), UniqueName(comp, inst->name() + ".rows"));
  column->mutable_dimensions() = dims;
  column->set_has_dimensions(true);
  column->AppendOperand(inst->operand(0));
  HloInstruction* col = Insert(comp, std::move(column), EarliestAfter(comp, inst->operand(0), inst));
  inst->ReplaceOperandWith(0, col);
  inst->mutable_dimensions() = leading;
  return true;
}

// imag of a real value -> zeros (real of one is its operand: lowerer.h IsAliasOfOperand), as XLA's
// algebraic simplifier rewrites it. (Size ops are dynamic-padder's, earlier in the pipeline.)
bool ReplaceImagOfReal(HloComputation& comp, HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kImag || !inst->shape().IsArray() ||
      inst->operand_count() == 0 || !inst->operand(0)->shape().IsArray() ||
      hlo::IsComplex(inst->operand(0)->shape().element_type())) {
    return false;
  }
  const Shape& s = inst->shape();
  HloBuilder b(&comp, inst);
  HloInstruction* by = b.Broadcast(b.ScalarConstant(s.element_type(), 0, "zero"), s, {}, "zeros");
  inst->ReplaceAllUsesWith(by);
  comp.RemoveInstruction(inst);
  return true;
}

bool RunOnComputation(HloComputation& comp) {
  bool changed = false;
  std::vector<HloInstruction*> order;
  for (const auto& i : comp.instructions()) order.push_back(i.get());
  for (HloInstruction* inst : order) {
    // Both rewrites remove inst: nothing may read it after either.
    if (ReplaceImagOfReal(comp, inst) || StaticSliceFromConstantStarts(comp, inst)) {
      changed = true;
      continue;
    }
    changed |= SplitMiddleBroadcast(comp, inst);
  }
  order.clear();
  for (const auto& i : comp.instructions()) order.push_back(i.get());
  for (HloInstruction* inst : order) {
    if (inst->opcode() != HloOpcode::kDot) continue;
    changed |= FoldTransposes(inst);
    if (!DotMarked(inst)) changed |= MarkStationaryLhs(inst);
    if (!IsCanonicalDot(inst)) {
      CanonicalizeDot(comp, inst);
      changed = true;
    }
  }
  order.clear();
  for (const auto& i : comp.instructions()) order.push_back(i.get());
  for (HloInstruction* inst : order) {
    if (IsNoOp(inst) && inst != comp.root_instruction()) {
      inst->ReplaceAllUsesWith(inst->operand(0));
      changed = true;
    }
    // get-tuple-element(tuple(..., x, ...), i) -> x (an inlined callee's result tuple).
    if (inst->opcode() == HloOpcode::kGetTupleElement && inst != comp.root_instruction() &&
        inst->operand(0)->opcode() == HloOpcode::kTuple) {
      inst->ReplaceAllUsesWith(inst->operand(0)->operand(inst->tuple_index()));
      changed = true;
    }
  }
  // Remove dead data movement, last to first so chains disappear in one sweep: an instruction is
  // detached from its operands as it is found dead, so operands it alone used are dead when the
  // sweep reaches them. One removal pass for all of them (linear, not one per instruction).
  std::vector<HloInstruction*> dead;
  order.clear();
  for (const auto& i : comp.instructions()) order.push_back(i.get());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* inst = *it;
    if (inst->users().empty() && inst != comp.root_instruction() && IsRemovableWhenDead(inst)) {
      inst->DetachOperands();
      dead.push_back(inst);
    }
  }
  if (!dead.empty()) {
    comp.RemoveInstructions(dead);
    changed = true;
  }
  return changed;
}

}  // namespace

bool DotHasStationaryLhs(const hlo::HloInstruction& dot) { return DotMarked(&dot); }

StatusOr<bool> Canonicalize::Run(hlo::HloModule& module) {
  bool changed = false;
  for (const auto& comp : module.computations()) changed |= RunOnComputation(*comp);
  return changed;
}

}  // namespace tpusim::compiler
