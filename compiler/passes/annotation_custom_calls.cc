#include "compiler/passes/annotation_custom_calls.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr const char* kLayoutConstraint = "LayoutConstraint";
constexpr const char* kPlacementAttribute = "_xla_buffer_placement";

std::string Where(const hlo::HloModule& module, const HloInstruction& inst) {
  return FormatDiagnostic(
      module.source_name(), "", inst.location(),
      fmt::format("%{} ({})", inst.name(), hlo::HloOpcodeString(inst.opcode())));
}

bool IsTarget(const HloInstruction& inst, const char* target) {
  return inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == target;
}

bool IsAnnotation(const HloInstruction& inst) {
  return IsTarget(inst, kLayoutConstraint) || IsHostOffloadAnnotation(inst);
}

Status CheckAnnotation(const hlo::HloModule& module, const HloInstruction& inst) {
  const hlo::Shape& s = inst.shape();
  if (inst.operand_count() != 1 || !s.IsArray() || !inst.operand(0)->shape().IsArray() ||
      inst.operand(0)->shape().dimensions() != s.dimensions() ||
      inst.operand(0)->shape().element_type() != s.element_type()) {
    return InvalidArgument(fmt::format(
        "{}: custom_call_target=\"{}\" annotates one array operand and gives it back unchanged "
        "(same dimensions and element type); got {} operand(s) for a result {}",
        Where(module, inst), inst.custom_call_target(), inst.operand_count(), s.ToString(false)));
  }
  if (!IsTarget(inst, "annotate_device_placement")) return OkStatus();
  for (const auto& [key, value] : inst.frontend_attributes()) {
    if (key != kPlacementAttribute) continue;
    if (value == "device" || value == "pinned_host" || value == "unpinned_host") return OkStatus();
    return InvalidArgument(fmt::format(
        "{}: {}=\"{}\" is not a memory kind XLA places buffers in (device, pinned_host, "
        "unpinned_host)",
        Where(module, inst), kPlacementAttribute, value));
  }
  return InvalidArgument(fmt::format(
      "{}: custom_call_target=\"annotate_device_placement\" needs frontend_attributes={{{}=...}} "
      "(device, pinned_host or unpinned_host)",
      Where(module, inst), kPlacementAttribute));
}

}  // namespace

bool IsHostOffloadAnnotation(const HloInstruction& inst) {
  return IsTarget(inst, "MoveToHost") || IsTarget(inst, "MoveToDevice") ||
         IsTarget(inst, "annotate_device_placement");
}

StatusOr<bool> AnnotationCustomCalls::Run(hlo::HloModule& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (IsAnnotation(*inst)) TPUSIM_RETURN_IF_ERROR(CheckAnnotation(module, *inst));
    }
  }
  return RewriteEach(module, IsAnnotation, [](hlo::HloComputation& comp, HloInstruction* inst) {
    HloInstruction* replacement = inst->operand(0);
    if (IsTarget(*inst, kLayoutConstraint)) {
      HloBuilder b(&comp, inst);
      replacement = b.Add(CloneInstructionAs(*inst, HloOpcode::kCopy, inst->shape(), {replacement},
                                             b.UniqueName(inst->name())));
      replacement->set_custom_call_target("");
    }
    inst->ReplaceAllUsesWith(replacement);
    comp.RemoveInstruction(inst);
  });
}

}  // namespace tpusim::compiler
