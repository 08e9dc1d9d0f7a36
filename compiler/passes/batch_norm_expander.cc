#include "compiler/passes/batch_norm_expander.h"

#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

bool IsBatchNorm(HloOpcode op) {
  return op == HloOpcode::kBatchNormTraining || op == HloOpcode::kBatchNormInference ||
         op == HloOpcode::kBatchNormGrad;
}

bool Expandable(const HloInstruction& bn) {
  if (!IsBatchNorm(bn.opcode())) return false;
  const PrimitiveType t = bn.operand(0)->shape().element_type();
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kBF16) return false;
  for (const HloInstruction* op : bn.operands()) {
    if (!op->shape().IsArray() || op->shape().element_type() != t) return false;
  }
  return bn.feature_index() >= 0 && bn.feature_index() < bn.operand(0)->shape().rank();
}

// convert(x) to `type`, same dimensions (x itself if it already has that type).
HloInstruction* ConvertTo(HloBuilder& b, HloInstruction* x, PrimitiveType type) {
  if (x->shape().element_type() == type) return x;
  auto c = std::make_unique<HloInstruction>(HloOpcode::kConvert,
                                            hlo::Shape(type, x->shape().dimensions()),
                                            b.UniqueName(x->name() + ".f32"));
  c->AppendOperand(x);
  return b.Add(std::move(c));
}

// The f32 arithmetic of one batch-norm op; operands already converted to f32 (`ops`).
class BatchNormMath {
 public:
  BatchNormMath(hlo::HloModule& module, HloBuilder& b, const HloInstruction& bn,
                const hlo::Shape& xs)
      : module_(module),
        b_(b),
        xs_(xs),
        f_(bn.feature_index()),
        fshape_(PrimitiveType::kF32, {xs.dimensions(bn.feature_index())}) {
    const int64_t features = xs.dimensions(f_);
    n_ = features == 0 ? 0 : xs.ElementCount() / features;
    for (int64_t d = 0; d < xs.rank(); ++d) {
      if (d != f_) reduce_dims_.push_back(d);
    }
  }
  HloInstruction* ToX(HloInstruction* v, const char* s) { return b_.Broadcast(v, xs_, {f_}, s); }
  HloInstruction* FeatureConstant(double v, const char* s) {
    return b_.Splat(fshape_, v, s);
  }
  // Sum over every dimension but the feature dimension: f32[features].
  HloInstruction* Sum(HloInstruction* v, const char* s) {
    hlo::HloComputation* add = GetOrAddScalarAdd(module_, PrimitiveType::kF32);
    return b_.Reduce(v, b_.ScalarConstant(PrimitiveType::kF32, 0.0, "zero"), reduce_dims_, add, s);
  }
  HloInstruction* Mean(HloInstruction* v, const char* s) {
    return b_.Binary(HloOpcode::kDivide, Sum(v, s), FeatureConstant(static_cast<double>(n_), "n"),
                     s);
  }
  HloInstruction* Bin(HloOpcode op, HloInstruction* a, HloInstruction* c, const char* s) {
    return b_.Binary(op, a, c, s);
  }
  int64_t count() const { return n_; }

 private:
  hlo::HloModule& module_;
  HloBuilder& b_;
  const hlo::Shape& xs_;
  int64_t f_;
  hlo::Shape fshape_;
  int64_t n_ = 0;
  std::vector<int64_t> reduce_dims_;
};

void Expand(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* bn) {
  HloBuilder b(&comp, bn);
  const PrimitiveType type = bn->operand(0)->shape().element_type();
  std::vector<HloInstruction*> ops;
  for (HloInstruction* op : bn->operands()) ops.push_back(ConvertTo(b, op, PrimitiveType::kF32));
  HloInstruction* x = ops[0];
  const hlo::Shape xs(PrimitiveType::kF32, x->shape().dimensions());
  BatchNormMath m(module, b, *bn, xs);
  HloInstruction* eps = m.FeatureConstant(static_cast<double>(bn->epsilon()), "epsilon");
  const bool grad = bn->opcode() == HloOpcode::kBatchNormGrad;
  HloInstruction *mean = nullptr, *var = nullptr;
  if (bn->opcode() == HloOpcode::kBatchNormTraining) {
    mean = m.Mean(x, "mean");
  } else {
    mean = ops[grad ? 2 : 3];
    var = ops[grad ? 3 : 4];
  }
  HloInstruction* xc = m.Bin(HloOpcode::kSubtract, x, m.ToX(mean, "mean_b"), "centered");
  if (bn->opcode() == HloOpcode::kBatchNormTraining) {
    var = m.Mean(m.Bin(HloOpcode::kMultiply, xc, xc, "square"), "var");
  }
  HloInstruction* var_eps = m.Bin(HloOpcode::kAdd, var, eps, "var_eps");
  HloInstruction* rs = b.Unary(HloOpcode::kRsqrt, var_eps, "rsqrt");
  std::vector<HloInstruction*> results;
  if (grad) {
    // XLA's BatchNormExpander: grad_offset = sum(dy); grad_scale = sum(dy * xc) * rsqrt(var+eps);
    // dx = scale * rsqrt(var+eps) * (dy - grad_offset / N - xc * sum(dy * xc) / (N (var+eps))).
    HloInstruction* dy = ops[4];
    HloInstruction* grad_offset = m.Sum(dy, "grad_offset");
    HloInstruction* sum_dy_xc = m.Sum(m.Bin(HloOpcode::kMultiply, dy, xc, "dy_xc"), "sum_dy_xc");
    HloInstruction* grad_scale = m.Bin(HloOpcode::kMultiply, sum_dy_xc, rs, "grad_scale");
    HloInstruction* n = m.FeatureConstant(static_cast<double>(m.count()), "n");
    HloInstruction* mean_dy = m.Bin(HloOpcode::kDivide, grad_offset, n, "mean_dy");
    HloInstruction* k = m.Bin(HloOpcode::kDivide, sum_dy_xc,
                              m.Bin(HloOpcode::kMultiply, n, var_eps, "n_var_eps"), "k");
    HloInstruction* inner = m.Bin(
        HloOpcode::kSubtract, m.Bin(HloOpcode::kSubtract, dy, m.ToX(mean_dy, "mean_dy_b"), "dy_c"),
        m.Bin(HloOpcode::kMultiply, xc, m.ToX(k, "k_b"), "xc_k"), "inner");
    HloInstruction* factor = m.Bin(HloOpcode::kMultiply, ops[1], rs, "factor");
    HloInstruction* dx = m.Bin(HloOpcode::kMultiply, inner, m.ToX(factor, "factor_b"), "dx");
    results = {dx, grad_scale, grad_offset};
  } else {
    HloInstruction* factor = m.Bin(HloOpcode::kMultiply, ops[1], rs, "factor");
    HloInstruction* y =
        m.Bin(HloOpcode::kAdd, m.Bin(HloOpcode::kMultiply, xc, m.ToX(factor, "factor_b"), "scaled"),
              m.ToX(ops[2], "offset_b"), "y");
    results = {y};
    if (bn->opcode() == HloOpcode::kBatchNormTraining) results = {y, mean, var};
  }
  for (HloInstruction*& r : results) r = ConvertTo(b, r, type);
  HloInstruction* result = results.size() == 1 ? results[0] : b.Tuple(results, "result");
  bn->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(bn);
}

}  // namespace

StatusOr<bool> BatchNormExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, [&module](hlo::HloComputation& comp, HloInstruction* bn) {
    Expand(module, comp, bn);
  });
}

}  // namespace tpusim::compiler
