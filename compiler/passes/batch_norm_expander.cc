#include "compiler/passes/batch_norm_expander.h"

#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

bool Expandable(const HloInstruction& bn) {
  if (bn.opcode() != HloOpcode::kBatchNormTraining &&
      bn.opcode() != HloOpcode::kBatchNormInference) {
    return false;
  }
  for (const HloInstruction* op : bn.operands()) {
    if (op->shape().element_type() != PrimitiveType::kF32) return false;
  }
  return bn.feature_index() >= 0 && bn.feature_index() < bn.operand(0)->shape().rank();
}

void Expand(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* bn) {
  HloBuilder b(&comp, bn);
  HloInstruction* x = bn->operand(0);
  const hlo::Shape& xs = x->shape();
  const int64_t f = bn->feature_index();
  const int64_t features = xs.dimensions(f);
  const int64_t n = features == 0 ? 0 : xs.ElementCount() / features;
  std::vector<int64_t> reduce_dims;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (d != f) reduce_dims.push_back(d);
  }
  const hlo::Shape fshape(PrimitiveType::kF32, {features});
  auto bcast_x = [&](HloInstruction* v, const char* s) { return b.Broadcast(v, xs, {f}, s); };
  auto bcast_f = [&](HloInstruction* v, const char* s) { return b.Broadcast(v, fshape, {}, s); };
  HloInstruction* eps =
      bcast_f(b.ScalarConstant(PrimitiveType::kF32, static_cast<double>(bn->epsilon()), "epsilon"),
              "epsilon_b");
  HloInstruction *mean = nullptr, *var = nullptr;
  if (bn->opcode() == HloOpcode::kBatchNormTraining) {
    hlo::HloComputation* add = GetOrAddScalarAdd(module, PrimitiveType::kF32);
    HloInstruction* zero = b.ScalarConstant(PrimitiveType::kF32, 0.0, "zero");
    HloInstruction* count =
        bcast_f(b.ScalarConstant(PrimitiveType::kF32, static_cast<double>(n), "count"), "count_b");
    HloInstruction* sum = b.Reduce(x, zero, reduce_dims, add, "sum");
    mean = b.Binary(HloOpcode::kDivide, sum, count, "mean");
  } else {
    mean = bn->operand(3);
    var = bn->operand(4);
  }
  HloInstruction* xc = b.Binary(HloOpcode::kSubtract, x, bcast_x(mean, "mean_b"), "centered");
  if (bn->opcode() == HloOpcode::kBatchNormTraining) {
    hlo::HloComputation* add = GetOrAddScalarAdd(module, PrimitiveType::kF32);
    HloInstruction* zero = b.ScalarConstant(PrimitiveType::kF32, 0.0, "zero");
    HloInstruction* count =
        bcast_f(b.ScalarConstant(PrimitiveType::kF32, static_cast<double>(n), "count"), "count_b");
    HloInstruction* sq = b.Binary(HloOpcode::kMultiply, xc, xc, "square");
    var =
        b.Binary(HloOpcode::kDivide, b.Reduce(sq, zero, reduce_dims, add, "sum_sq"), count, "var");
  }
  HloInstruction* rs =
      b.Unary(HloOpcode::kRsqrt, b.Binary(HloOpcode::kAdd, var, eps, "var_eps"), "rsqrt");
  HloInstruction* factor = b.Binary(HloOpcode::kMultiply, bn->operand(1), rs, "factor");
  HloInstruction* y = b.Binary(
      HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, xc, bcast_x(factor, "factor_b"), "scaled"),
      bcast_x(bn->operand(2), "offset_b"), "y");
  HloInstruction* result = y;
  if (bn->opcode() == HloOpcode::kBatchNormTraining) result = b.Tuple({y, mean, var}, "result");
  bn->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(bn);
}

}  // namespace

StatusOr<bool> BatchNormExpander::Run(hlo::HloModule& module) {
  bool changed = false;
  std::vector<hlo::HloComputation*> comps;
  for (const auto& c : module.computations()) comps.push_back(c.get());
  for (hlo::HloComputation* comp : comps) {
    std::vector<HloInstruction*> bns;
    for (const auto& i : comp->instructions()) {
      if (Expandable(*i)) bns.push_back(i.get());
    }
    for (HloInstruction* bn : bns) Expand(module, *comp, bn);
    changed = changed || !bns.empty();
  }
  return changed;
}

}  // namespace tpusim::compiler
