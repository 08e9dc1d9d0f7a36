#include "compiler/passes/pred_reduce_expander.h"

#include <memory>
#include <optional>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

/// kMinimum for an and / minimum reducer of pred, kMaximum for or / maximum; nullopt otherwise.
std::optional<HloOpcode> F32Reducer(const HloInstruction& r) {
  if (r.opcode() != HloOpcode::kReduce || r.operand_count() != 2 || !r.shape().IsArray() ||
      r.operand(0)->shape().element_type() != PrimitiveType::kPred || r.to_apply() == nullptr ||
      r.to_apply()->num_parameters() != 2) {
    return std::nullopt;
  }
  const HloInstruction* root = r.to_apply()->root_instruction();
  if (root->operand_count() != 2 || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter || root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case HloOpcode::kAnd:
    case HloOpcode::kMinimum:
      return HloOpcode::kMinimum;
    case HloOpcode::kOr:
    case HloOpcode::kMaximum:
      return HloOpcode::kMaximum;
    default:
      return std::nullopt;
  }
}

void Expand(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* r, HloOpcode op) {
  HloBuilder b(&comp, r);
  HloInstruction* x = b.Convert(r->operand(0), PrimitiveType::kF32, "as_f32");
  HloInstruction* init = b.Convert(r->operand(1), PrimitiveType::kF32, "init_f32");
  hlo::HloComputation* reducer = GetOrAddScalarBinary(module, PrimitiveType::kF32, op);
  HloInstruction* sum = b.Reduce(x, init, r->dimensions(), reducer, "f32");
  HloInstruction* zero = b.Splat(sum->shape(), 0.0, "zero", "zeros");
  HloInstruction* out = b.Compare(sum, zero, hlo::ComparisonDirection::kNe, "pred");
  r->ReplaceAllUsesWith(out);
  comp.RemoveInstruction(r);
}

}  // namespace

StatusOr<bool> PredReduceExpander::Run(hlo::HloModule& module) {
  return RewriteEach(
      module, [](const HloInstruction& i) { return F32Reducer(i).has_value(); },
      [&module](hlo::HloComputation& comp, HloInstruction* r) {
        Expand(module, comp, r, *F32Reducer(*r));
      });
}

}  // namespace tpusim::compiler
