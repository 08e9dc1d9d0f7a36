#include "compiler/passes/float8_dot_upcast.h"

#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::IsFloat8;
using hlo::PrimitiveType;

bool Matches(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kDot && inst.opcode() != HloOpcode::kConvolution) return false;
  if (!inst.shape().IsArray() || inst.operand_count() != 2) return false;
  return IsFloat8(inst.shape().element_type()) ||
         IsFloat8(inst.operand(0)->shape().element_type()) ||
         IsFloat8(inst.operand(1)->shape().element_type());
}

void Upcast(hlo::HloComputation& comp, HloInstruction* inst) {
  HloBuilder b(&comp, inst);
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* x = inst->operand(i);
    const bool f8 = IsFloat8(x->shape().element_type());
    operands.push_back(f8 ? b.Convert(x, PrimitiveType::kBF16, "bf16") : x);
  }
  const PrimitiveType result = inst->shape().element_type();
  hlo::Shape shape = inst->shape();
  if (IsFloat8(result)) shape.set_element_type(PrimitiveType::kF32);
  HloInstruction* op = b.Add(CloneInstructionAs(*inst, inst->opcode(), shape, operands,
                                                b.UniqueName(inst->name() + ".upcast")));
  HloInstruction* out = IsFloat8(result) ? b.Convert(op, result, "f8") : op;
  inst->ReplaceAllUsesWith(out);
  comp.RemoveInstruction(inst);
}

}  // namespace

StatusOr<bool> Float8DotUpcast::Run(hlo::HloModule& module) {
  return RewriteEach(module, Matches, Upcast);
}

}  // namespace tpusim::compiler
