#include "compiler/passes/data_formatting.h"

#include <set>

#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/tiled_layout.h"

namespace tpusim::compiler {
namespace {

constexpr const char* kAttribute = "_tpusim_data_formatting";

bool Tiled(const hlo::Shape& s) {
  return s.IsArray() && s.has_layout() && !s.layout().tiles.empty();
}

bool CopyOrReshape(hlo::HloOpcode op) {
  return op == hlo::HloOpcode::kReshape || op == hlo::HloOpcode::kCopy;
}

bool Marked(const hlo::HloInstruction& inst) {
  for (const auto& [key, value] : inst.frontend_attributes()) {
    if (key == kAttribute) return value == "true";
  }
  return false;
}

}  // namespace

bool MovesData(const hlo::HloInstruction& inst) {
  if (!CopyOrReshape(inst.opcode())) return false;
  if (Marked(inst)) return true;
  return inst.opcode() == hlo::HloOpcode::kCopy && inst.operand_count() == 1 &&
         hlo::CopyChangesLayout(inst.operand(0)->shape(), inst.shape());
}

StatusOr<bool> DataFormatting::Run(hlo::HloModule& module) {
  std::set<const hlo::HloComputation*> fused;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == hlo::HloOpcode::kFusion && inst->called_computation() != nullptr) {
        fused.insert(inst->called_computation());
      }
    }
  }
  bool changed = false;
  for (const auto& c : module.computations()) {
    if (fused.count(c.get())) continue;
    for (const auto& inst : c->instructions()) {
      if (!CopyOrReshape(inst->opcode()) || Marked(*inst) || inst->operand_count() != 1 ||
          !Tiled(inst->shape()) || !Tiled(inst->operand(0)->shape())) {
        continue;
      }
      inst->mutable_frontend_attributes().emplace_back(kAttribute, "true");
      changed = true;
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
