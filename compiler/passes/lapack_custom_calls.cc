#include "compiler/passes/lapack_custom_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/householder_qr_expansion.h"
#include "compiler/passes/matrix_builder.h"
#include "hlo/linalg_options.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

bool IsLapackCall(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return false;
  for (const std::string& t : hlo::LapackTargets()) {
    if (inst.custom_call_target() == t) return true;
  }
  return false;
}

const char* Bool(bool b) { return b ? "true" : "false"; }

// InvalidArgument "file:line:col: error: message" at `inst`.
Status Located(const hlo::HloModule& module, const HloInstruction& inst, std::string_view message) {
  return LocatedError(module.source_name(), "", inst.location(), message);
}

// The HLO op of `call` on `cc`'s operands (cholesky or triangular-solve), attributes as the
// parser keeps them (hlo/linalg_options.h).
HloInstruction* LinalgOp(HloBuilder& b, const HloInstruction& cc, const hlo::LapackCall& call,
                         const Shape& shape) {
  const bool potrf = call.kind == hlo::LapackCall::Kind::kPotrf;
  auto op = std::make_unique<HloInstruction>(
      potrf ? HloOpcode::kCholesky : HloOpcode::kTriangularSolve, shape,
      b.UniqueName(cc.name() + (potrf ? ".cholesky" : ".triangular-solve")));
  for (HloInstruction* operand : cc.operands()) op->AppendOperand(operand);
  auto& attrs = op->mutable_raw_attributes();
  if (potrf) {
    attrs.emplace_back("lower", Bool(call.cholesky.lower));
  } else {
    const hlo::TriangularSolveOptions& o = call.solve;
    attrs.emplace_back("left_side", Bool(o.left_side));
    attrs.emplace_back("lower", Bool(o.lower));
    attrs.emplace_back("unit_diagonal", Bool(o.unit_diagonal));
    attrs.emplace_back("transpose_a",
                       o.transpose_a == hlo::TriangularSolveTranspose::kNoTranspose ? "NO_TRANSPOSE"
                       : o.transpose_a == hlo::TriangularSolveTranspose::kTranspose ? "TRANSPOSE"
                                                                                    : "ADJOINT");
  }
  return b.Add(std::move(op));
}

// info [batch...] s32: 1 where the matrix's factor holds a NaN, else 0.
HloInstruction* FactorInfo(hlo::HloModule& module, HloBuilder& b, HloInstruction* factor,
                           const Shape& info) {
  const int64_t rank = factor->shape().rank();
  HloInstruction* nan = b.Compare(factor, factor, hlo::ComparisonDirection::kNe, "isnan");
  HloInstruction* any =
      b.Reduce(nan, b.ScalarConstant(PrimitiveType::kPred, 0, "false"), {rank - 2, rank - 1},
               GetOrAddScalarBinary(module, PrimitiveType::kPred, HloOpcode::kOr), "failed");
  HloInstruction* one =
      b.Broadcast(b.ScalarConstant(PrimitiveType::kS32, 1, "one"), info, {}, "ones");
  HloInstruction* zero =
      b.Broadcast(b.ScalarConstant(PrimitiveType::kS32, 0, "zero"), info, {}, "zeros");
  return b.Select(any, one, zero, "info");
}

// getrf's (lu, ipiv, info) from a [..., m, n], the steps of hlo::LuFactor (hlo/eval/kernels/
// linalg.h) unrolled, k = 0 .. min(m, n) - 1, in the same operations and order: the pivot row by
// a max-abs reduce and the first row that reaches it (a min-reduce over masked row indices), the
// row exchange by masks (the new row k a masked sum), the column below the pivot divided by it
// unless it is zero, and the trailing block less the outer product of that column and row k.
class GetrfExpansion {
 public:
  GetrfExpansion(hlo::HloModule& module, hlo::HloComputation* comp, HloInstruction* cc)
      : module_(module), mb_(comp, cc), b_(mb_.builder()), a_(cc->operand(0)) {
    const auto& d = a_->shape().dimensions();
    batch_.assign(d.begin(), d.end() - 2);
    B_ = static_cast<int64_t>(batch_.size());
    m_ = d[d.size() - 2];
    n_ = d[d.size() - 1];
    t_ = a_->shape().element_type();
  }

  // getrf's (lu, ipiv, info); with `tpu`, the TPU's LuDecomposition (lu, pivots 0-based,
  // permutation: hlo::LuDecomposition).
  HloInstruction* Build(bool tpu) {
    HloInstruction* a = a_;
    HloInstruction* info = mb_.Full(PrimitiveType::kS32, 0, batch_);
    HloInstruction* perm = tpu ? mb_.Iota(Dims(batch_, {m_}), B_) : nullptr;
    std::vector<HloInstruction*> pivots;
    for (int64_t k = 0; k < std::min(m_, n_); ++k) {
      HloInstruction* p = PivotRow(a, k);
      HloInstruction* piv =
          tpu ? p : b_.Binary(HloOpcode::kAdd, p, mb_.Full(PrimitiveType::kS32, 1, batch_), "ipiv");
      pivots.push_back(b_.Reshape(piv, Dims(batch_, {1}), "ipiv1"));
      if (tpu) perm = SwapEntries(perm, k, p);
      a = SwapRows(a, k, p);
      HloInstruction* pivot = mb_.SliceMinor(a, k, k, k + 1, k + 1);  // [..., 1, 1]
      HloInstruction* pv = b_.Reshape(pivot, batch_, "pivot");
      HloInstruction* first_zero = b_.Binary(
          HloOpcode::kAnd, b_.Compare(info, mb_.Full(PrimitiveType::kS32, 0, batch_),
                                      hlo::ComparisonDirection::kEq, "noinfo"),
          b_.Compare(pv, mb_.Full(t_, 0, batch_), hlo::ComparisonDirection::kEq, "zero"),
          "first");
      HloInstruction* step = mb_.Full(PrimitiveType::kS32, static_cast<double>(k + 1), batch_);
      info = b_.Select(first_zero, step, info, "info");
      if (k + 1 >= m_) continue;
      HloInstruction* col = mb_.SliceMinor(a, k + 1, k, m_, k + 1);  // [..., m-k-1, 1]
      const Shape& cs = col->shape();
      HloInstruction* pb = Spread(pv, cs);
      HloInstruction* l = b_.Select(
          b_.Compare(pb, mb_.Full(t_, 0, cs.dimensions()), hlo::ComparisonDirection::kNe, "nz"),
          b_.Binary(HloOpcode::kDivide, col, pb, "l"), col, "col");
      a = mb_.UpdateMinor(a, l, k + 1, k);
      if (k + 1 >= n_) continue;
      HloInstruction* sub = mb_.SliceMinor(a, k + 1, k + 1, m_, n_);  // [..., m-k-1, n-k-1]
      HloInstruction* u = b_.Reshape(mb_.SliceMinor(a, k, k + 1, k + 1, n_),
                                     Dims(batch_, {n_ - k - 1}), "u");
      const Shape& ss = sub->shape();
      HloInstruction* lb = b_.Broadcast(b_.Reshape(l, Dims(batch_, {m_ - k - 1}), "lv"), ss,
                                        Dims(Range(B_), {B_}), "lb");
      HloInstruction* ub = b_.Broadcast(u, ss, Dims(Range(B_), {B_ + 1}), "ub");
      a = mb_.UpdateMinor(
          a, b_.Binary(HloOpcode::kSubtract, sub, b_.Binary(HloOpcode::kMultiply, lb, ub, "lu"),
                       "trail"),
          k + 1, k + 1);
    }
    return b_.Tuple({a, b_.Concatenate(pivots, B_, "ipiv"), tpu ? perm : info}, "result");
  }

 private:
  static std::vector<int64_t> Dims(std::vector<int64_t> v, std::initializer_list<int64_t> more) {
    v.insert(v.end(), more.begin(), more.end());
    return v;
  }
  static std::vector<int64_t> Range(int64_t n) {
    std::vector<int64_t> r(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = i;
    return r;
  }
  // x [...] broadcast along the minor dimensions of `like` [..., r, c].
  HloInstruction* Spread(HloInstruction* x, const Shape& like) {
    return b_.Broadcast(x, like, Range(B_), "spread");
  }

  // p [...] s32: the row of the largest |a[i, k]|, i >= k (the first such row; m for a NaN).
  HloInstruction* PivotRow(HloInstruction* a, int64_t k) {
    HloInstruction* col = b_.Unary(HloOpcode::kAbs, mb_.SliceMinor(a, k, k, m_, k + 1), "abs");
    const Shape& cs = col->shape();  // [..., m-k, 1]
    HloInstruction* mx =
        b_.Reduce(col, b_.ScalarConstant(t_, 0, "zero"), {B_, B_ + 1},
                  GetOrAddScalarBinary(module_, t_, HloOpcode::kMaximum), "max");
    HloInstruction* at_max =
        b_.Compare(col, Spread(mx, cs), hlo::ComparisonDirection::kEq, "atmax");
    HloInstruction* rows = mb_.Iota(cs.dimensions(), B_);
    HloInstruction* none = mb_.Full(PrimitiveType::kS32, static_cast<double>(m_ - k),
                                    cs.dimensions());
    HloInstruction* idx = b_.Reduce(
        b_.Select(at_max, rows, none, "cand"),
        b_.ScalarConstant(PrimitiveType::kS32, static_cast<double>(m_ - k), "none"),
        {B_, B_ + 1}, GetOrAddScalarBinary(module_, PrimitiveType::kS32, HloOpcode::kMinimum),
        "first");
    return b_.Binary(HloOpcode::kAdd, idx, mb_.Full(PrimitiveType::kS32, k, batch_), "p");
  }

  // The masks of an exchange along dimension B_ of shape `s`: index == p [...] and index == k.
  std::pair<HloInstruction*, HloInstruction*> SwapMasks(const Shape& s, int64_t k,
                                                        HloInstruction* p) {
    HloInstruction* idx = mb_.Iota(s.dimensions(), B_);
    HloInstruction* is_p = b_.Compare(idx, Spread(p, s), hlo::ComparisonDirection::kEq, "isp");
    HloInstruction* is_k = b_.Compare(idx, mb_.Full(PrimitiveType::kS32, k, s.dimensions()),
                                      hlo::ComparisonDirection::kEq, "isk");
    return {is_p, is_k};
  }

  // v [..., m] s32 with entries k and p [...] exchanged (p = m: entry k becomes 0).
  HloInstruction* SwapEntries(HloInstruction* v, int64_t k, HloInstruction* p) {
    const Shape& s = v->shape();
    auto [is_p, is_k] = SwapMasks(s, k, p);
    HloInstruction* zeros = mb_.Full(PrimitiveType::kS32, 0, s.dimensions());
    auto pick = [&](HloInstruction* mask, const char* name) {
      return b_.Reduce(b_.Select(mask, v, zeros, "pick"),
                       b_.ScalarConstant(PrimitiveType::kS32, 0, "zero"), {B_},
                       GetOrAddScalarAdd(module_, PrimitiveType::kS32), name);  // [...]
    };
    HloInstruction* vk = pick(is_k, "permk");
    HloInstruction* vp = pick(is_p, "permp");
    HloInstruction* down = b_.Select(is_p, Spread(vk, s), v, "down");
    return b_.Select(is_k, Spread(vp, s), down, "perm");
  }

  // a with rows k and p [...] exchanged: row k the masked sum of row p, row p (if any) row k.
  HloInstruction* SwapRows(HloInstruction* a, int64_t k, HloInstruction* p) {
    const Shape& s = a->shape();
    auto [is_p, is_k] = SwapMasks(s, k, p);
    HloInstruction* zeros = mb_.Full(t_, 0, s.dimensions());
    HloInstruction* rowp = b_.Reduce(b_.Select(is_p, a, zeros, "pick"),
                                     b_.ScalarConstant(t_, 0, "zero"), {B_},
                                     GetOrAddScalarAdd(module_, t_), "rowp");  // [..., n]
    HloInstruction* rowk =
        b_.Reshape(mb_.SliceMinor(a, k, 0, k + 1, n_), Dims(batch_, {n_}), "rowk");
    const std::vector<int64_t> keep = Dims(Range(B_), {B_ + 1});
    HloInstruction* swapped = b_.Select(is_p, b_.Broadcast(rowk, s, keep, "rowkb"), a, "down");
    return b_.Select(is_k, b_.Broadcast(rowp, s, keep, "rowpb"), swapped, "swap");
  }

  hlo::HloModule& module_;
  MatrixBuilder mb_;
  HloBuilder& b_;
  HloInstruction* a_;
  std::vector<int64_t> batch_;
  int64_t B_ = 0, m_ = 0, n_ = 0;
  PrimitiveType t_ = PrimitiveType::kF32;
};

// geqrf: a [..., m, n] f32 -> (a's shape, [..., min(m, n)]); orgqr: (a, taus [..., t <= min(m,
// n)]) -> a's shape. A located InvalidArgument saying so otherwise.
Status CheckQrShapes(const hlo::HloModule& module, const HloInstruction& cc, bool geqrf) {
  const Shape& s = cc.shape();
  const Shape& a = cc.operand_count() >= 1 ? cc.operand(0)->shape() : s;
  bool ok = cc.operand_count() == (geqrf ? 1 : 2) && a.IsArray() && a.rank() >= 2 &&
            hlo::IsFloatingPoint(a.element_type());
  if (ok) {
    const int64_t m = a.dimensions(a.rank() - 2), n = a.dimensions(a.rank() - 1);
    if (m == 0 || n == 0) {
      return Located(module, cc,
                     "%" + cc.name() + ": custom-call " + cc.custom_call_target() +
                         ": a " + a.ToString(false) + " has an empty dimension: not expanded");
    }
    std::vector<int64_t> taus(a.dimensions().begin(), a.dimensions().end() - 2);
    if (geqrf) {
      taus.push_back(std::min(m, n));
      ok = s.IsTuple() && s.tuple_shapes().size() == 2 &&
           s.tuple_shapes(0).dimensions() == a.dimensions() &&
           s.tuple_shapes(1).dimensions() == taus;
    } else {
      const Shape& t = cc.operand(1)->shape();
      ok = s.IsArray() && s.dimensions() == a.dimensions() && t.IsArray() &&
           t.rank() == a.rank() - 1 && t.dimensions(t.rank() - 1) <= std::min(m, n);
    }
  }
  if (ok) return OkStatus();
  return Located(module, cc,
                 "%" + cc.name() + ": custom-call " + cc.custom_call_target() +
                     (geqrf ? " takes a floating-point a [..., m, n] and gives (a, taus [..., "
                              "min(m, n)])"
                            : " takes (a [..., m, n] floating point, taus [..., t], t <= min(m, "
                              "n)) and gives q of a's shape"));
}

}  // namespace

StatusOr<bool> LapackCustomCalls::Run(hlo::HloModule& module) {
  return RewriteEach(module, IsLapackCall, [&](hlo::HloComputation& comp,
                                               HloInstruction* cc) -> StatusOr<bool> {
    StatusOr<std::optional<hlo::LapackCall>> call =
        hlo::GetLapackCall(cc->custom_call_target(), cc->backend_config(), cc->name());
    if (!call.ok()) return Located(module, *cc, call.status().message());
    HloBuilder b(&comp, cc);
    HloInstruction* result = nullptr;
    const hlo::LapackCall::Kind kind = (*call)->kind;
    if (kind == hlo::LapackCall::Kind::kGeqrf || kind == hlo::LapackCall::Kind::kOrgqr) {
      const bool geqrf = kind == hlo::LapackCall::Kind::kGeqrf;
      TPUSIM_RETURN_IF_ERROR(CheckQrShapes(module, *cc, geqrf));
      result = geqrf ? ExpandGeqrf(module, &comp, cc) : ExpandHouseholderProduct(module, &comp, cc);
      cc->ReplaceAllUsesWith(result);
      comp.RemoveInstruction(cc);
      return true;
    }
    const bool tpu_lu = kind == hlo::LapackCall::Kind::kLuDecomposition;
    if ((*call)->kind == hlo::LapackCall::Kind::kGetrf || tpu_lu) {
      const Shape& s = cc->shape();
      const Shape& a = cc->operand_count() == 1 ? cc->operand(0)->shape() : s;
      if (cc->operand_count() != 1 || !a.IsArray() || a.rank() < 2 || !s.IsTuple() ||
          s.tuple_shapes().size() != 3 || s.tuple_shapes(0).dimensions() != a.dimensions() ||
          (a.element_type() != PrimitiveType::kF32 && a.element_type() != PrimitiveType::kF64)) {
        return Located(module, *cc,
                       "%" + cc->name() + ": custom-call " + cc->custom_call_target() +
                           " takes f32 or f64 (a [..., m, n]) and gives (lu, s32 pivots, " +
                           (tpu_lu ? "s32 permutation)" : "s32 info)"));
      }
      result = GetrfExpansion(module, &comp, cc).Build(tpu_lu);
    } else if ((*call)->kind == hlo::LapackCall::Kind::kTrsm) {
      result = LinalgOp(b, *cc, **call, cc->shape());
    } else {
      const Shape& s = cc->shape();
      if (!s.IsTuple() || s.tuple_shapes().size() != 2 || !s.tuple_shapes(0).IsArray() ||
          s.tuple_shapes(1).element_type() != PrimitiveType::kS32 || cc->operand_count() != 1) {
        return Located(module, *cc,
                       "%" + cc->name() + ": custom-call " + cc->custom_call_target() +
                           " takes (a) and gives (factor, s32 info)");
      }
      HloInstruction* factor = LinalgOp(b, *cc, **call, s.tuple_shapes(0));
      result = b.Tuple({factor, FactorInfo(module, b, factor, s.tuple_shapes(1))}, "result");
    }
    cc->ReplaceAllUsesWith(result);
    comp.RemoveInstruction(cc);
    return true;
  });
}

std::string UnreadLapackCallNote(std::string_view target) {
  constexpr std::string_view kPrefix = "lapack_", kSuffix = "_ffi";
  if (!target.starts_with(kPrefix) || target.size() <= kPrefix.size() + 1) return "";
  std::string_view routine = target.substr(kPrefix.size() + 1);  // after the type letter
  if (routine.ends_with(kSuffix)) routine.remove_suffix(kSuffix.size());
  struct Routine {
    std::string_view name, what;
    bool tpu;  // JAX lowers the function for a TPU without this call
  };
  static constexpr Routine kRoutines[] = {
      {"gtsv", "a tridiagonal solve (jax.lax.linalg.tridiagonal_solve)", true},
      {"geev", "a nonsymmetric eigendecomposition (jnp.linalg.eig, eigvals)", false},
      {"gees", "a Schur decomposition (jax.scipy.linalg.schur)", false},
  };
  const std::string lower_for_tpu =
      "lower the function for a TPU instead (jax.jit(f).trace(*args).lower("
      "lowering_platforms=('tpu',)), or tpusim.jax.lower(..., platform='tpu'))";
  for (const Routine& r : kRoutines) {
    if (routine != r.name) continue;
    if (r.tpu) {
      return fmt::format("{} is JAX's CPU LAPACK call for {}: {}, where JAX writes HLO that "
                         "tpusim runs",
                         target, r.what, lower_for_tpu);
    }
    return fmt::format("{} is JAX's CPU LAPACK call for {}, which JAX cannot lower for a TPU "
                       "(no TPU lowering of the primitive): the function does not run on a TPU",
                       target, r.what);
  }
  return fmt::format("{} is a JAX CPU LAPACK call tpusim does not read: {}", target,
                     lower_for_tpu);
}

}  // namespace tpusim::compiler
