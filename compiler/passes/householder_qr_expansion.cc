#include "compiler/passes/householder_qr_expansion.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/matrix_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// The helpers both expansions share: batch dimensions [...] and the matrix [..., m, n].
class QrBuilder {
 public:
  QrBuilder(hlo::HloModule& module, hlo::HloComputation* comp, HloInstruction* cc)
      : module_(module), mb_(comp, cc), b_(mb_.builder()) {
    const Shape& a = cc->operand(0)->shape();
    batch_.assign(a.dimensions().begin(), a.dimensions().end() - 2);
    B_ = static_cast<int64_t>(batch_.size());
    m_ = a.dimensions(a.rank() - 2);
    n_ = a.dimensions(a.rank() - 1);
    t_ = a.element_type();
  }

  std::vector<int64_t> Dims(std::initializer_list<int64_t> more) const {
    std::vector<int64_t> v = batch_;
    v.insert(v.end(), more.begin(), more.end());
    return v;
  }
  std::vector<int64_t> Range(int64_t n) const {
    std::vector<int64_t> r;
    for (int64_t i = 0; i < n; ++i) r.push_back(i);
    return r;
  }
  HloInstruction* Spread(HloInstruction* x, const Shape& like) {
    return b_.Broadcast(x, like, Range(B_), "spread");
  }
  HloInstruction* Bin(HloOpcode op, HloInstruction* x, HloInstruction* y) {
    return b_.Binary(op, x, y, "qr");
  }
  // The reflector's vector over rows k..m-1 of column k of `a`: [1, a[k+1:, k]] as [..., m-k].
  HloInstruction* Reflector(HloInstruction* a, int64_t k) {
    HloInstruction* one = b_.Reshape(mb_.Full(t_, 1, Dims({1, 1})), Dims({1}), "one");
    if (k + 1 >= m_) return one;
    HloInstruction* below = b_.Reshape(mb_.SliceMinor(a, k + 1, k, m_, k + 1), Dims({m_ - k - 1}),
                                       "below");
    return b_.Concatenate({one, below}, B_, "v");
  }
  // x [..., r, c] less tau [...] * v [..., r] (outer) (v^T x) [..., c].
  HloInstruction* Reflect(HloInstruction* x, HloInstruction* v, HloInstruction* tau) {
    const Shape& s = x->shape();
    HloInstruction* vb = b_.Broadcast(v, s, Range(B_ + 1), "vb");
    HloInstruction* w = b_.Reduce(Bin(HloOpcode::kMultiply, vb, x), b_.ScalarConstant(t_, 0, "0"),
                                  {B_}, GetOrAddScalarAdd(module_, t_), "w");
    std::vector<int64_t> wdims = Range(B_);
    wdims.push_back(B_ + 1);
    HloInstruction* wb = b_.Broadcast(w, s, wdims, "wb");
    HloInstruction* tv = Bin(HloOpcode::kMultiply, Spread(tau, s), vb);
    return Bin(HloOpcode::kSubtract, x, Bin(HloOpcode::kMultiply, tv, wb));
  }

  hlo::HloModule& module_;
  MatrixBuilder mb_;
  HloBuilder& b_;
  std::vector<int64_t> batch_;
  int64_t B_ = 0, m_ = 0, n_ = 0;
  PrimitiveType t_ = PrimitiveType::kF32;
};

}  // namespace

HloInstruction* ExpandGeqrf(hlo::HloModule& module, hlo::HloComputation* comp,
                            HloInstruction* cc) {
  QrBuilder q(module, comp, cc);
  HloBuilder& b = q.b_;
  MatrixBuilder& mb = q.mb_;
  const PrimitiveType t = q.t_;
  const int64_t m = q.m_, n = q.n_;
  HloInstruction* a = cc->operand(0);
  std::vector<HloInstruction*> taus;
  HloInstruction* zero = mb.Full(t, 0, q.batch_);
  for (int64_t k = 0; k < std::min(m, n); ++k) {
    HloInstruction* alpha = b.Reshape(mb.SliceMinor(a, k, k, k + 1, k + 1), q.batch_, "alpha");
    HloInstruction* x = k + 1 < m ? mb.SliceMinor(a, k + 1, k, m, k + 1) : nullptr;
    HloInstruction* sigma =
        x == nullptr ? zero
                     : b.Reduce(q.Bin(HloOpcode::kMultiply, x, x), b.ScalarConstant(t, 0, "0"),
                                {q.B_, q.B_ + 1}, GetOrAddScalarAdd(module, t), "sigma");
    HloInstruction* mu = b.Unary(
        HloOpcode::kSqrt, q.Bin(HloOpcode::kAdd, q.Bin(HloOpcode::kMultiply, alpha, alpha), sigma),
        "mu");
    HloInstruction* flat = b.Compare(sigma, zero, ComparisonDirection::kEq, "flat");
    HloInstruction* negative = b.Compare(alpha, zero, ComparisonDirection::kLt, "negative");
    HloInstruction* beta = b.Select(
        flat, alpha, b.Select(negative, mu, b.Unary(HloOpcode::kNegate, mu, "-mu"), "signed"),
        "beta");
    HloInstruction* tau =
        b.Select(flat, zero,
                 q.Bin(HloOpcode::kDivide, q.Bin(HloOpcode::kSubtract, beta, alpha), beta), "tau");
    taus.push_back(b.Reshape(tau, q.Dims({1}), "tau1"));
    if (x != nullptr) {
      HloInstruction* divisor = b.Select(flat, mb.Full(t, 1, q.batch_),
                                         q.Bin(HloOpcode::kSubtract, alpha, beta), "divisor");
      a = mb.UpdateMinor(a, q.Bin(HloOpcode::kDivide, x, q.Spread(divisor, x->shape())), k + 1,
                         k);
    }
    a = mb.UpdateMinor(a, b.Reshape(beta, q.Dims({1, 1}), "beta11"), k, k);
    if (k + 1 < n) {
      HloInstruction* trail = mb.SliceMinor(a, k, k + 1, m, n);
      a = mb.UpdateMinor(a, q.Reflect(trail, q.Reflector(a, k), tau), k, k + 1);
    }
  }
  return b.Tuple({a, b.Concatenate(taus, q.B_, "taus")}, "qr");
}

HloInstruction* ExpandHouseholderProduct(hlo::HloModule& module, hlo::HloComputation* comp,
                                         HloInstruction* cc) {
  QrBuilder q(module, comp, cc);
  HloBuilder& b = q.b_;
  MatrixBuilder& mb = q.mb_;
  const int64_t m = q.m_, n = q.n_;
  HloInstruction* a = cc->operand(0);
  HloInstruction* taus = cc->operand(1);
  const std::vector<int64_t> dims = q.Dims({m, n});
  HloInstruction* y = b.Select(
      b.Compare(mb.Iota(dims, q.B_), mb.Iota(dims, q.B_ + 1), ComparisonDirection::kEq, "diag"),
      mb.Full(q.t_, 1, dims), mb.Full(q.t_, 0, dims), "eye");
  const int64_t t = taus->shape().dimensions(taus->shape().rank() - 1);
  for (int64_t k = t - 1; k >= 0; --k) {
    std::vector<int64_t> start(static_cast<size_t>(q.B_ + 1), 0);
    std::vector<int64_t> limit = taus->shape().dimensions();
    start.back() = k;
    limit.back() = k + 1;
    HloInstruction* tau = b.Reshape(
        b.Slice(taus, start, limit, std::vector<int64_t>(start.size(), 1), "tauk"), q.batch_,
        "tau");
    y = mb.UpdateMinor(y, q.Reflect(mb.SliceMinor(y, k, 0, m, n), q.Reflector(a, k), tau), k, 0);
  }
  return y;
}

}  // namespace tpusim::compiler
