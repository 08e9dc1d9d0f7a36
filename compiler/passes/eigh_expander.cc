#include "compiler/passes/eigh_expander.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/matrix_builder.h"
#include "hlo/custom_call_check.h"
#include "hlo/linalg_options.h"

namespace tpusim::compiler {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

// The Jacobi state's matrices: the quadrants of a and of v.
enum { kTl = 0, kTr, kBl, kBr, kVtl, kVtr, kVbl, kVbr, kMatrices };
using Matrices = std::array<HloInstruction*, kMatrices>;

std::vector<int64_t> Range(int64_t n) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = i;
  return r;
}

std::vector<int64_t> Append(std::vector<int64_t> v, std::initializer_list<int64_t> more) {
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

HloInstruction* Gte(HloBuilder& b, HloInstruction* t, int64_t i) {
  auto g = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, t->shape().tuple_shapes(i),
                                            b.UniqueName(fmt::format("{}.e{}", t->name(), i)));
  g->set_tuple_index(i);
  g->AppendOperand(t);
  return b.Add(std::move(g));
}

// A new computation of one parameter of shape `param` whose root `fill(builder, parameter)`
// builds; its instructions take `cc`'s name as prefix, location and metadata.
template <typename Fill>
hlo::HloComputation* NewComputation(hlo::HloModule& module, const HloInstruction& cc,
                                    const std::string& name, const Shape& param, Fill fill) {
  std::string unique = name;
  for (int i = 1; module.FindComputation(unique) != nullptr; ++i) {
    unique = fmt::format("{}.{}", name, i);
  }
  auto comp = std::make_unique<hlo::HloComputation>(unique);
  auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, param, "state");
  p->set_parameter_number(0);
  HloInstruction* state = comp->AddInstruction(std::move(p));
  auto mark = std::make_unique<HloInstruction>(HloOpcode::kTuple, Shape::Tuple({}), cc.name());
  mark->set_location(cc.location());
  mark->mutable_metadata() = cc.metadata();
  HloInstruction* anchor = comp->AddInstruction(std::move(mark));
  hlo::HloComputation* raw = comp.get();
  {
    MatrixBuilder mb(raw, anchor);
    raw->set_root_instruction(fill(mb, state));
  }
  raw->RemoveInstruction(anchor);
  return module.AddComputation(std::move(comp));
}

// The sort comparator p0 < p1 over (w, w, v, v) of `type`.
hlo::HloComputation* LessThan(hlo::HloModule& module, PrimitiveType type) {
  const std::string name = "tpusim.eigh_compare." + std::string(hlo::PrimitiveTypeName(type));
  if (hlo::HloComputation* c = module.FindComputation(name)) return c;
  auto comp = std::make_unique<hlo::HloComputation>(name);
  std::vector<HloInstruction*> params;
  for (int64_t i = 0; i < 4; ++i) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape::Scalar(type),
                                              fmt::format("p{}", i));
    p->set_parameter_number(i);
    params.push_back(comp->AddInstruction(std::move(p)));
  }
  auto cmp = std::make_unique<HloInstruction>(HloOpcode::kCompare,
                                              Shape::Scalar(PrimitiveType::kPred), "lt");
  cmp->set_comparison_direction(ComparisonDirection::kLt);
  cmp->AppendOperand(params[0]);
  cmp->AppendOperand(params[1]);
  comp->set_root_instruction(comp->AddInstruction(std::move(cmp)));
  return module.AddComputation(std::move(comp));
}

class EighExpansion {
 public:
  // The eigendecomposition of `a` [..., n, n], placed before `cc` (whose name it takes).
  EighExpansion(hlo::HloModule& module, HloInstruction* cc, HloInstruction* a,
                const hlo::EighOptions& options)
      : module_(module), cc_(cc), a_(a), o_(options) {
    const Shape& a_shape = a->shape();
    batch_.assign(a_shape.dimensions().begin(), a_shape.dimensions().end() - 2);
    B_ = static_cast<int64_t>(batch_.size());
    n_ = a_shape.dimensions(a_shape.rank() - 1);
    k_ = (n_ + 1) / 2;
    t_ = a_shape.element_type();
    quad_ = Append(batch_, {k_, k_});
    vec_ = Append(batch_, {k_});
  }

  // (v, w), or (v, w, info) with `info`; placed before the call in `comp`.
  HloInstruction* Build(hlo::HloComputation* comp, bool info);
  // v [..., n, n] (eigenvectors in columns) and w [..., n], built with `mb`.
  std::pair<HloInstruction*, HloInstruction*> Decompose(MatrixBuilder& mb);
  // The sweeps' while (null for n <= 1).
  HloInstruction* loop() const { return loop_; }

 private:
  Shape QuadShape() const { return Shape(t_, quad_); }
  // x [..., k, k] -> its diagonal [..., k].
  HloInstruction* Diag(MatrixBuilder& mb, HloInstruction* x) {
    HloBuilder& b = mb.builder();
    HloInstruction* on = b.Select(mb.TriangleMask(quad_, ComparisonDirection::kEq, 0), x,
                                  mb.Full(t_, 0, quad_), "ondiag");
    return b.Reduce(on, b.ScalarConstant(t_, 0, "zero"), {B_ + 1}, GetOrAddScalarAdd(module_, t_),
                    "diag");
  }
  // x with its diagonal set to d [..., k] (zeros when d is null).
  HloInstruction* SetDiag(MatrixBuilder& mb, HloInstruction* x, HloInstruction* d) {
    HloBuilder& b = mb.builder();
    HloInstruction* on = d == nullptr ? mb.Full(t_, 0, quad_)
                                      : b.Broadcast(d, QuadShape(), Append(Range(B_), {B_}), "d");
    return b.Select(mb.TriangleMask(quad_, ComparisonDirection::kEq, 0), on, x, "setdiag");
  }
  // Brent and Luk's round-robin step over the rows (`rows`) or columns of a pair of quadrants.
  void Permute(MatrixBuilder& mb, HloInstruction*& first, HloInstruction*& second, bool rows) {
    if (k_ <= 1) return;
    auto part = [&](HloInstruction* x, int64_t lo, int64_t hi) {
      return rows ? mb.SliceMinor(x, lo, 0, hi, k_) : mb.SliceMinor(x, 0, lo, k_, hi);
    };
    const int64_t dim = rows ? B_ : B_ + 1;
    std::vector<HloInstruction*> f = {part(first, 0, 1), part(second, 0, 1)};
    if (k_ > 2) f.push_back(part(first, 1, k_ - 1));
    HloInstruction* s = mb.builder().Concatenate({part(second, 1, k_), part(first, k_ - 1, k_)},
                                                 dim, "second");
    first = mb.builder().Concatenate(f, dim, "first");
    second = s;
  }
  Matrices Round(MatrixBuilder& mb, Matrices q);
  HloInstruction* Converging(MatrixBuilder& mb, HloInstruction* state);
  HloInstruction* Sweep(MatrixBuilder& mb, HloInstruction* state);
  HloInstruction* Sweeps(MatrixBuilder& mb, HloInstruction* a);

  hlo::HloModule& module_;
  HloInstruction* cc_;
  HloInstruction* a_;
  hlo::EighOptions o_;
  std::vector<int64_t> batch_, quad_, vec_;
  int64_t B_ = 0, n_ = 0, k_ = 0;
  PrimitiveType t_ = PrimitiveType::kF32;
  HloInstruction* loop_ = nullptr;
};

// One round: the k Schur rotations (XLA's HermitianEigenDecomposition2x2) applied to the rows
// and columns of a and the rows of v, the diagonal pairs set, the round-robin permutation.
Matrices EighExpansion::Round(MatrixBuilder& mb, Matrices q) {
  HloBuilder& b = mb.builder();
  auto full = [&](double v) { return mb.Full(t_, v, vec_); };
  auto bin = [&](HloOpcode op, HloInstruction* x, HloInstruction* y) {
    return b.Binary(op, x, y, "jacobi");
  };
  using enum HloOpcode;
  HloInstruction* a = Diag(mb, q[kTl]);
  HloInstruction* off = Diag(mb, q[kTr]);
  HloInstruction* d = Diag(mb, q[kBr]);
  HloInstruction* tau = bin(kDivide, bin(kSubtract, d, a), bin(kMultiply, full(2), off));
  HloInstruction* root = b.Unary(kSqrt, bin(kAdd, full(1), bin(kMultiply, tau, tau)), "root");
  HloInstruction* signed_root =
      b.Select(b.Compare(tau, full(0), ComparisonDirection::kGe, "ge"), root,
               b.Unary(kNegate, root, "neg"), "sroot");
  HloInstruction* t = bin(kDivide, full(1), bin(kAdd, tau, signed_root));
  const double tiny = 0.1 * static_cast<double>(std::numeric_limits<float>::epsilon());
  HloInstruction* small = b.Compare(
      b.Unary(kAbs, off, "abs"),
      bin(kMultiply, full(tiny), bin(kMinimum, b.Unary(kAbs, a, "abs"), b.Unary(kAbs, d, "abs"))),
      ComparisonDirection::kLe, "tiny");
  t = b.Select(small, full(0), t, "t");
  HloInstruction* c = b.Unary(kRsqrt, bin(kAdd, full(1), bin(kMultiply, t, t)), "c");
  HloInstruction* s = bin(kMultiply, t, c);
  HloInstruction* rt1 = bin(kSubtract, a, bin(kMultiply, t, off));
  HloInstruction* rt2 = bin(kAdd, d, bin(kMultiply, t, off));
  auto spread = [&](HloInstruction* x, int64_t dim) {
    return b.Broadcast(x, QuadShape(), Append(Range(B_), {dim}), "spread");
  };
  HloInstruction *cr = spread(c, B_), *sr = spread(s, B_);
  HloInstruction *cc = spread(c, B_ + 1), *sc = spread(s, B_ + 1);
  // (x, y) <- (x c - y s, x s + y c)
  auto rotate = [&](HloInstruction*& x, HloInstruction*& y, HloInstruction* cb,
                    HloInstruction* sb) {
    HloInstruction* nx = bin(kSubtract, bin(kMultiply, x, cb), bin(kMultiply, y, sb));
    y = bin(kAdd, bin(kMultiply, x, sb), bin(kMultiply, y, cb));
    x = nx;
  };
  rotate(q[kTl], q[kBl], cr, sr);
  rotate(q[kTr], q[kBr], cr, sr);
  rotate(q[kTl], q[kTr], cc, sc);
  rotate(q[kBl], q[kBr], cc, sc);
  q[kTl] = SetDiag(mb, q[kTl], rt1);
  q[kTr] = SetDiag(mb, q[kTr], nullptr);
  q[kBl] = SetDiag(mb, q[kBl], nullptr);
  q[kBr] = SetDiag(mb, q[kBr], rt2);
  Permute(mb, q[kTl], q[kTr], /*rows=*/false);
  Permute(mb, q[kBl], q[kBr], /*rows=*/false);
  Permute(mb, q[kTl], q[kBl], /*rows=*/true);
  Permute(mb, q[kTr], q[kBr], /*rows=*/true);
  rotate(q[kVtl], q[kVbl], cr, sr);
  rotate(q[kVtr], q[kVbr], cr, sr);
  Permute(mb, q[kVtl], q[kVbl], /*rows=*/true);
  Permute(mb, q[kVtr], q[kVbr], /*rows=*/true);
  return q;
}

// The sweeps' condition on (sweep, tol, a's quadrants, v's): sweep < max_iter and, for some
// matrix of the batch, tol^2 ||a||_F^2 < ||offdiag(a)||_F^2.
HloInstruction* EighExpansion::Converging(MatrixBuilder& mb, HloInstruction* state) {
  HloBuilder& b = mb.builder();
  using enum HloOpcode;
  auto sq = [&](HloInstruction* x) { return b.Binary(kMultiply, x, x, "sq"); };
  auto offdiag = [&](HloInstruction* x) { return SetDiag(mb, x, nullptr); };
  auto sum = [&](HloInstruction* x) {
    return b.Reduce(x, b.ScalarConstant(t_, 0, "zero"), {B_, B_ + 1},
                    GetOrAddScalarAdd(module_, t_), "norm");
  };
  std::array<HloInstruction*, 4> q;
  for (int64_t i = 0; i < 4; ++i) q[static_cast<size_t>(i)] = Gte(b, state, 2 + i);
  HloInstruction* all = sum(b.Binary(
      kAdd, b.Binary(kAdd, b.Binary(kAdd, sq(q[kTl]), sq(q[kTr]), "s"), sq(q[kBl]), "s"),
      sq(q[kBr]), "s"));
  HloInstruction* off = sum(b.Binary(
      kAdd,
      b.Binary(kAdd, b.Binary(kAdd, sq(offdiag(q[kTl])), sq(q[kTr]), "s"), sq(q[kBl]), "s"),
      sq(offdiag(q[kBr])), "s"));
  HloInstruction* tol = Gte(b, state, 1);
  HloInstruction* tol2 = b.Binary(kMultiply, tol, tol, "tol2");
  if (B_ > 0) tol2 = b.Broadcast(tol2, Shape(t_, batch_), {}, "tol2");
  HloInstruction* big = b.Compare(b.Binary(kMultiply, all, tol2, "bound"), off,
                                  ComparisonDirection::kLt, "unconverged");
  if (B_ > 0) {
    big = b.Reduce(big, b.ScalarConstant(PrimitiveType::kPred, 0, "false"), Range(B_),
                   GetOrAddScalarBinary(module_, PrimitiveType::kPred, kOr), "any");
  }
  HloInstruction* more =
      b.Compare(Gte(b, state, 0), b.ScalarConstant(PrimitiveType::kS32, o_.max_iter, "max_iter"),
                ComparisonDirection::kLt, "more");
  return b.Binary(kAnd, more, big, "sweep");
}

// One sweep on (sweep, tol, matrices): 2k - 1 rounds in a counted while.
HloInstruction* EighExpansion::Sweep(MatrixBuilder& mb, HloInstruction* state) {
  HloBuilder& b = mb.builder();
  std::vector<Shape> inner_shapes(1 + kMatrices, QuadShape());
  inner_shapes[0] = Shape::Scalar(PrimitiveType::kS32);
  const Shape inner = Shape::Tuple(inner_shapes);
  hlo::HloComputation* cond = NewComputation(
      module_, *cc_, cc_->name() + ".rounds_cond", inner, [&](MatrixBuilder& m, HloInstruction* p) {
        HloBuilder& cb = m.builder();
        return cb.Compare(Gte(cb, p, 0),
                          cb.ScalarConstant(PrimitiveType::kS32, 2 * k_ - 1, "rounds"),
                          ComparisonDirection::kLt, "round");
      });
  hlo::HloComputation* body = NewComputation(
      module_, *cc_, cc_->name() + ".rounds", inner, [&](MatrixBuilder& m, HloInstruction* p) {
        HloBuilder& rb = m.builder();
        Matrices q;
        for (int64_t i = 0; i < kMatrices; ++i) q[static_cast<size_t>(i)] = Gte(rb, p, 1 + i);
        q = Round(m, q);
        std::vector<HloInstruction*> out = {rb.Binary(
            HloOpcode::kAdd, Gte(rb, p, 0), rb.ScalarConstant(PrimitiveType::kS32, 1, "one"),
            "next")};
        out.insert(out.end(), q.begin(), q.end());
        return rb.Tuple(out, "state");
      });
  std::vector<HloInstruction*> init = {b.ScalarConstant(PrimitiveType::kS32, 0, "round0")};
  for (int64_t i = 0; i < kMatrices; ++i) init.push_back(Gte(b, state, 2 + i));
  auto w = std::make_unique<HloInstruction>(HloOpcode::kWhile, inner,
                                            b.UniqueName(cc_->name() + ".rounds"));
  w->set_while_condition(cond);
  w->set_while_body(body);
  w->AppendOperand(b.Tuple(init, "rounds_init"));
  HloInstruction* rounds = b.Add(std::move(w));
  std::vector<HloInstruction*> out = {
      b.Binary(HloOpcode::kAdd, Gte(b, state, 0), b.ScalarConstant(PrimitiveType::kS32, 1, "one"),
               "next"),
      Gte(b, state, 1)};
  for (int64_t i = 0; i < kMatrices; ++i) out.push_back(Gte(b, rounds, 1 + i));
  return b.Tuple(out, "state");
}

// The data-dependent while of sweeps over the scaled, symmetric a; its final state.
HloInstruction* EighExpansion::Sweeps(MatrixBuilder& mb, HloInstruction* x) {
  HloBuilder& b = mb.builder();
  Matrices q;
  q[kTl] = mb.SliceMinor(x, 0, 0, k_, k_);
  q[kTr] = mb.SliceMinor(x, 0, k_, k_, n_);
  q[kBl] = mb.SliceMinor(x, k_, 0, n_, k_);
  q[kBr] = mb.SliceMinor(x, k_, k_, n_, n_);
  if (n_ % 2 != 0) {  // the padded row and column
    auto pad = [&](HloInstruction* y, bool row, bool col) {
      hlo::PaddingConfig config;
      config.dimensions.resize(static_cast<size_t>(B_ + 2));
      config.dimensions[static_cast<size_t>(B_)].edge_padding_high = row ? 1 : 0;
      config.dimensions[static_cast<size_t>(B_ + 1)].edge_padding_high = col ? 1 : 0;
      return b.Pad(y, b.ScalarConstant(t_, 0, "zero"), config, "pad");
    };
    q[kTr] = pad(q[kTr], false, true);
    q[kBl] = pad(q[kBl], true, false);
    q[kBr] = pad(q[kBr], true, true);
  }
  HloInstruction* zeros = mb.Full(t_, 0, quad_);
  q[kVtl] = q[kVbr] = b.Select(mb.TriangleMask(quad_, ComparisonDirection::kEq, 0),
                               mb.Full(t_, 1, quad_), zeros, "eye");
  q[kVtr] = q[kVbl] = zeros;
  std::vector<HloInstruction*> init = {b.ScalarConstant(PrimitiveType::kS32, 0, "sweep0"),
                                       b.ScalarConstant(t_, o_.epsilon, "tol")};
  init.insert(init.end(), q.begin(), q.end());
  HloInstruction* state0 = b.Tuple(init, "init");
  const Shape& state = state0->shape();
  hlo::HloComputation* cond =
      NewComputation(module_, *cc_, cc_->name() + ".sweeps_cond", state,
                     [&](MatrixBuilder& m, HloInstruction* p) { return Converging(m, p); });
  hlo::HloComputation* body =
      NewComputation(module_, *cc_, cc_->name() + ".sweeps", state,
                     [&](MatrixBuilder& m, HloInstruction* p) { return Sweep(m, p); });
  auto w = std::make_unique<HloInstruction>(HloOpcode::kWhile, state,
                                            b.UniqueName(cc_->name() + ".jacobi"));
  w->set_while_condition(cond);
  w->set_while_body(body);
  w->AppendOperand(state0);
  loop_ = b.Add(std::move(w));
  return loop_;
}

std::pair<HloInstruction*, HloInstruction*> EighExpansion::Decompose(MatrixBuilder& mb) {
  HloBuilder& b = mb.builder();
  using enum HloOpcode;
  HloInstruction* a = a_;
  const std::vector<int64_t>& dims = a->shape().dimensions();
  const std::vector<int64_t> wdims = Append(batch_, {n_});
  HloInstruction *v = nullptr, *w = nullptr;
  if (n_ <= 1) {
    v = mb.Full(t_, 1, dims);
    w = b.Reshape(a, wdims, "w");
  } else {
    HloInstruction* sym = b.Select(
        mb.TriangleMask(dims, o_.lower ? ComparisonDirection::kGe : ComparisonDirection::kLe, 0),
        a, mb.TransposeMinor(a), "symmetric");
    HloInstruction* amax = b.Reduce(b.Unary(kAbs, sym, "abs"), b.ScalarConstant(t_, 0, "zero"),
                                    {B_, B_ + 1}, GetOrAddScalarBinary(module_, t_, kMaximum),
                                    "amax");
    HloInstruction* scale = b.Select(
        b.Compare(amax, mb.Full(t_, 0, batch_), ComparisonDirection::kEq, "zero"),
        mb.Full(t_, 1, batch_), amax, "scale");
    HloInstruction* x =
        b.Binary(kDivide, sym, b.Broadcast(scale, a->shape(), Range(B_), "scale"), "scaled");
    HloInstruction* done = Sweeps(mb, x);
    Matrices q;
    for (int64_t i = 0; i < kMatrices; ++i) q[static_cast<size_t>(i)] = Gte(b, done, 2 + i);
    HloInstruction* all_w = b.Concatenate({Diag(mb, q[kTl]), Diag(mb, q[kBr])}, B_, "w");
    w = b.Slice(all_w, std::vector<int64_t>(static_cast<size_t>(B_ + 1), 0), wdims,
                std::vector<int64_t>(static_cast<size_t>(B_ + 1), 1), "w");
    w = b.Binary(kMultiply, w, b.Broadcast(scale, Shape(t_, wdims), Range(B_), "scale"), "w");
    HloInstruction* top = b.Concatenate({q[kVtl], q[kVtr]}, B_ + 1, "vtop");
    HloInstruction* bottom = b.Concatenate({q[kVbl], q[kVbr]}, B_ + 1, "vbottom");
    v = mb.TransposeMinor(mb.SliceMinor(b.Concatenate({top, bottom}, B_, "v"), 0, 0, n_, n_));
    if (o_.sort_eigenvalues) {
      HloInstruction* keys = b.Broadcast(w, a->shape(), Append(Range(B_), {B_ + 1}), "keys");
      auto sort = std::make_unique<HloInstruction>(
          kSort, Shape::Tuple({Shape(t_, dims), Shape(t_, dims)}),
          b.UniqueName(cc_->name() + ".sort"));
      sort->mutable_dimensions() = {B_ + 1};
      sort->set_has_dimensions(true);
      sort->set_is_stable(true);
      sort->set_to_apply(LessThan(module_, t_));
      sort->AppendOperand(keys);
      sort->AppendOperand(v);
      HloInstruction* sorted = b.Add(std::move(sort));
      w = b.Reshape(mb.SliceMinor(Gte(b, sorted, 0), 0, 0, 1, n_), wdims, "w");
      v = Gte(b, sorted, 1);
    }
  }
  return {v, w};
}

HloInstruction* EighExpansion::Build(hlo::HloComputation* comp, bool info) {
  MatrixBuilder mb(comp, cc_);
  auto [v, w] = Decompose(mb);
  std::vector<HloInstruction*> parts = {v, w};
  if (info) parts.push_back(mb.Full(PrimitiveType::kS32, 0, batch_));
  return mb.builder().Tuple(parts, "result");
}

// A located InvalidArgument unless `cc` is an f32 a [..., n, n] -> (v, w) (+ s32 info). (f64:
// the device holds f64 for conversion only, and the evaluator alone computes an f64 eigh.)
Status CheckShapes(const hlo::HloModule& module, const HloInstruction& cc, bool info) {
  const Shape& s = cc.shape();
  bool ok = cc.operand_count() == 1 && cc.operand(0)->shape().IsArray();
  if (ok) {
    const Shape& a = cc.operand(0)->shape();
    const int64_t r = a.rank();
    ok = r >= 2 && a.dimensions(r - 1) == a.dimensions(r - 2) &&
         a.element_type() == PrimitiveType::kF32;
    if (ok) {
      std::vector<int64_t> batch(a.dimensions().begin(), a.dimensions().end() - 2);
      const size_t parts = info ? 3 : 2;
      // Dimensions and types (LAPACK's column-major layouts are the same arrays).
      auto is = [](const Shape& x, PrimitiveType t, const std::vector<int64_t>& d) {
        return x.IsArray() && x.element_type() == t && x.dimensions() == d;
      };
      ok = s.IsTuple() && s.tuple_shapes().size() == parts &&
           is(s.tuple_shapes(0), a.element_type(), a.dimensions()) &&
           is(s.tuple_shapes(1), a.element_type(), Append(batch, {a.dimensions(r - 1)})) &&
           (!info || is(s.tuple_shapes(2), PrimitiveType::kS32, batch));
    }
  }
  if (ok) return OkStatus();
  return LocatedError(
      module.source_name(), "", cc.location(),
      fmt::format("%{}: custom-call {} takes an f32 a [..., n, n] and gives (v [..., n, n], w "
                  "[..., n]{}) of a's type (the device computes no f64); got {}",
                  cc.name(), cc.custom_call_target(), info ? ", info s32[...]" : "",
                  s.ToString(false)));
}

}  // namespace

// q [..., r, r] = orgqr(geqrf(c)) of c [..., r, k] padded to r columns, as the custom-calls JAX's
// TPU svd writes for it (Qr, ProductOfElementaryHouseholderReflectors: lapack-custom-calls
// expands them): its columns past k complete c's orthonormal columns to a basis.
HloInstruction* QrCompletion(MatrixBuilder& mb, HloInstruction* c) {
  HloBuilder& b = mb.builder();
  const Shape& cs = c->shape();
  const int64_t rank = cs.rank(), r = cs.dimensions(rank - 2), k = cs.dimensions(rank - 1);
  std::vector<int64_t> tdims(cs.dimensions().begin(), cs.dimensions().end() - 1);
  tdims.back() = k;
  auto call = [&](const Shape& shape, std::vector<HloInstruction*> operands, const char* target) {
    auto cc = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, shape,
                                               b.UniqueName(c->name() + ".qr"));
    cc->set_custom_call_target(target);
    for (HloInstruction* o : operands) cc->AppendOperand(o);
    return b.Add(std::move(cc));
  };
  HloInstruction* qr = call(Shape::Tuple({cs, Shape(cs.element_type(), tdims)}), {c}, "Qr");
  hlo::PaddingConfig config;
  config.dimensions.resize(static_cast<size_t>(rank));
  config.dimensions.back().edge_padding_high = r - k;
  HloInstruction* padded =
      b.Pad(Gte(b, qr, 0), b.ScalarConstant(cs.element_type(), 0, "zero"), config, "pad");
  std::vector<int64_t> qdims = cs.dimensions();
  qdims.back() = r;
  return call(Shape(cs.element_type(), qdims), {padded, Gte(b, qr, 1)},
              "ProductOfElementaryHouseholderReflectors");
}

// gesdd's (a, s, u, vt, info) of a [..., m, n] f32 from the eigendecomposition of the
// Jordan-Wielandt matrix [[0, a], [a^T, 0]] (hlo/eval/kernels/eigh.h, Gesdd: the same steps).
// u's columns / vt's rows past k complete the basis (QrCompletion). A located error for another
// shape.
StatusOr<HloInstruction*> ExpandGesdd(hlo::HloModule& module, hlo::HloComputation& comp,
                                      HloInstruction* cc, const hlo::LapackCall& call,
                                      HloInstruction** loop) {
  auto refuse = [&](const std::string& why) {
    return LocatedError(module.source_name(), "", cc->location(),
                        fmt::format("%{}: custom-call {}: {}", cc->name(),
                                    cc->custom_call_target(), why));
  };
  const Shape& s = cc->shape();
  if (cc->operand_count() != 1 || !cc->operand(0)->shape().IsArray() ||
      cc->operand(0)->shape().rank() < 2 ||
      cc->operand(0)->shape().element_type() != PrimitiveType::kF32 || !s.IsTuple() ||
      s.tuple_shapes().size() != 5) {
    return refuse("takes an f32 a [..., m, n] and gives (a, s, u, vt, info)");
  }
  HloInstruction* a = cc->operand(0);
  const int64_t r = a->shape().rank(), B = r - 2;
  const int64_t m = a->shape().dimensions(r - 2), n = a->shape().dimensions(r - 1);
  const int64_t k = std::min(m, n), big = m + n;
  if (k == 0) return refuse("a has an empty dimension (m or n is 0): not expanded");
  std::vector<int64_t> batch(a->shape().dimensions().begin(), a->shape().dimensions().end() - 2);
  const int64_t um = s.tuple_shapes(2).dimensions(r - 1), vn = s.tuple_shapes(3).dimensions(r - 2);
  if (s.tuple_shapes(1).dimensions() != Append(batch, {k}) ||
      s.tuple_shapes(2).dimensions() != Append(batch, {m, um}) ||
      s.tuple_shapes(3).dimensions() != Append(batch, {vn, n}) || (um != m && um != k) ||
      (vn != n && vn != k)) {
    return refuse("gives (a, s [..., min(m, n)], u [..., m, m or k], vt [..., n or k, n], info)");
  }
  MatrixBuilder mb(&comp, cc);
  HloBuilder& b = mb.builder();
  const PrimitiveType t = PrimitiveType::kF32;
  HloInstruction* top = b.Concatenate({mb.Full(t, 0, Append(batch, {m, m})), a}, B + 1, "top");
  HloInstruction* bottom = b.Concatenate(
      {mb.TransposeMinor(a), mb.Full(t, 0, Append(batch, {n, n}))}, B + 1, "bottom");
  HloInstruction* jw = b.Concatenate({top, bottom}, B, "jordan_wielandt");
  EighExpansion eigh(module, cc, jw, call.eigh);
  auto [v, w] = eigh.Decompose(mb);
  *loop = eigh.loop();
  auto reverse = [&](HloInstruction* x, int64_t dim) {
    auto rev = std::make_unique<HloInstruction>(HloOpcode::kReverse, x->shape(),
                                                b.UniqueName(cc->name() + ".reverse"));
    rev->mutable_dimensions() = {dim};
    rev->set_has_dimensions(true);
    rev->AppendOperand(x);
    return b.Add(std::move(rev));
  };
  // The k largest eigenvalues, descending, and their eigenvectors.
  std::vector<int64_t> lo(static_cast<size_t>(B + 1), 0), step(lo.size(), 1);
  lo.back() = big - k;
  HloInstruction* sv = reverse(b.Slice(w, lo, Append(batch, {big}), step, "s"), B);
  HloInstruction* cols = reverse(mb.SliceMinor(v, 0, big - k, big, big), B + 1);
  HloInstruction* root2 = mb.Full(t, std::sqrt(2.0), Append(batch, {m, k}));
  HloInstruction* u = b.Binary(HloOpcode::kMultiply, mb.SliceMinor(cols, 0, 0, m, k), root2, "u");
  HloInstruction* vpart = b.Binary(HloOpcode::kMultiply, mb.SliceMinor(cols, m, 0, big, k),
                                   mb.Full(t, std::sqrt(2.0), Append(batch, {n, k})), "v");
  HloInstruction* vt = mb.TransposeMinor(vpart);
  auto pad = [&](HloInstruction* x, int64_t rows, int64_t columns) {  // zeros up to the shape
    hlo::PaddingConfig config;
    config.dimensions.resize(static_cast<size_t>(r));
    config.dimensions[static_cast<size_t>(B)].edge_padding_high = rows;
    config.dimensions[static_cast<size_t>(B + 1)].edge_padding_high = columns;
    return rows + columns == 0 ? x : b.Pad(x, b.ScalarConstant(t, 0, "zero"), config, "pad");
  };
  if (call.compute_uv && um > k) {
    u = b.Concatenate({u, mb.SliceMinor(QrCompletion(mb, u), 0, k, m, m)}, B + 1, "u");
  } else {
    u = pad(u, 0, um - k);
  }
  if (call.compute_uv && vn > k) {
    HloInstruction* rest = mb.TransposeMinor(mb.SliceMinor(QrCompletion(mb, vpart), 0, k, n, n));
    vt = b.Concatenate({vt, rest}, B, "vt");
  } else {
    vt = pad(vt, vn - k, 0);
  }
  return b.Tuple({a, sv, u, vt, mb.Full(PrimitiveType::kS32, 0, batch)}, "result");
}

StatusOr<bool> EighExpander::Run(hlo::HloModule& module) {
  auto matches = [](const HloInstruction& i) {
    return i.opcode() == HloOpcode::kCustomCall && hlo::IsJacobiTarget(i.custom_call_target());
  };
  return RewriteEach(module, matches, [&](hlo::HloComputation& comp,
                                          HloInstruction* cc) -> StatusOr<bool> {
    StatusOr<std::optional<hlo::LapackCall>> call =
        hlo::GetLapackCall(cc->custom_call_target(), cc->backend_config(), cc->name());
    if (!call.ok()) {
      return LocatedError(module.source_name(), "", cc->location(), call.status().message());
    }
    // The verifier checked the signature of a loaded module; a pass-built call is checked here.
    if (Status s = hlo::CheckJacobiCallShapes(*cc); !s.ok()) {
      return LocatedError(module.source_name(), "", cc->location(),
                          fmt::format("%{}: {}", cc->name(), s.message()));
    }
    HloInstruction* result = nullptr;
    HloInstruction* loop = nullptr;
    if ((*call)->kind == hlo::LapackCall::Kind::kGesdd) {
      TPUSIM_ASSIGN_OR_RETURN(result, ExpandGesdd(module, comp, cc, **call, &loop));
    } else {
      const bool info = (*call)->kind == hlo::LapackCall::Kind::kSyevd;
      TPUSIM_RETURN_IF_ERROR(CheckShapes(module, *cc, info));
      EighExpansion expansion(module, cc, cc->operand(0), (*call)->eigh);
      result = expansion.Build(&comp, info);
      loop = expansion.loop();
    }
    const std::string name = cc->name();
    cc->ReplaceAllUsesWith(result);
    comp.RemoveInstruction(cc);
    // The sweeps' while takes the call's name: the evaluator counts its trips under it.
    if (loop != nullptr) loop->set_name(name);
    return true;
  });
}

}  // namespace tpusim::compiler
