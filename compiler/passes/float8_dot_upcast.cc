#include "compiler/passes/float8_dot_upcast.h"

#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::IsFloat8;
using hlo::PrimitiveType;

bool IsF16(PrimitiveType t) { return t == PrimitiveType::kF16; }
bool IsInt4(PrimitiveType t) { return t == PrimitiveType::kS4 || t == PrimitiveType::kU4; }

bool Matches(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kDot && inst.opcode() != HloOpcode::kConvolution) return false;
  if (!inst.shape().IsArray() || inst.operand_count() != 2) return false;
  const PrimitiveType r = inst.shape().element_type();
  const PrimitiveType a = inst.operand(0)->shape().element_type();
  const PrimitiveType b = inst.operand(1)->shape().element_type();
  const bool int4 = (IsInt4(a) || IsInt4(b)) && hlo::IsInteger(a) && hlo::IsInteger(b) &&
                    hlo::BitWidth(a) <= 8 && hlo::BitWidth(b) <= 8;
  return IsFloat8(r) || IsFloat8(a) || IsFloat8(b) || IsF16(r) || IsF16(a) || IsF16(b) || int4;
}

void Upcast(hlo::HloComputation& comp, HloInstruction* inst) {
  HloBuilder b(&comp, inst);
  std::vector<HloInstruction*> operands;
  bool f16 = false;
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* x = inst->operand(i);
    const PrimitiveType t = x->shape().element_type();
    f16 |= IsF16(t);
    operands.push_back(IsFloat8(t) ? b.Convert(x, PrimitiveType::kBF16, "bf16")
                       : IsF16(t)  ? b.Convert(x, PrimitiveType::kF32, "f32")
                       : IsInt4(t) ? b.Convert(x, PrimitiveType::kS8, "s8")
                                   : x);
  }
  const PrimitiveType result = inst->shape().element_type();
  f16 |= IsF16(result);
  const bool narrow_result = IsFloat8(result) || IsF16(result);
  hlo::Shape shape = inst->shape();
  if (narrow_result) shape.set_element_type(PrimitiveType::kF32);
  std::unique_ptr<HloInstruction> op = CloneInstructionAs(
      *inst, inst->opcode(), shape, operands, b.UniqueName(inst->name() + ".upcast"));
  if (f16) {  // every f16 product exact in f32: the MXU's six-pass f32 (an f16 is two bf16s)
    op->mutable_precision_config().operand_precision = {hlo::Precision::kHighest,
                                                        hlo::Precision::kHighest};
  }
  HloInstruction* added = b.Add(std::move(op));
  HloInstruction* out = narrow_result ? b.Convert(added, result, "narrow") : added;
  inst->ReplaceAllUsesWith(out);
  comp.RemoveInstruction(inst);
}

}  // namespace

StatusOr<bool> Float8DotUpcast::Run(hlo::HloModule& module) {
  return RewriteEach(module, Matches, Upcast);
}

}  // namespace tpusim::compiler
