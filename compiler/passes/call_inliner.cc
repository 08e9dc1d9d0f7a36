#include "compiler/passes/call_inliner.h"

#include <map>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The callee: `calls=` (fusion, and call in some dumps) or `to_apply=` (call as JAX prints it).
const hlo::HloComputation* Callee(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kCall && i.opcode() != HloOpcode::kFusion) return nullptr;
  if (i.called_computation() != nullptr) return i.called_computation();
  return i.opcode() == HloOpcode::kCall ? i.to_apply() : nullptr;
}

bool IsInlinable(const HloInstruction& i) { return Callee(i) != nullptr; }

void Inline(hlo::HloComputation& comp, HloInstruction* call) {
  const hlo::HloComputation& callee = *Callee(*call);
  HloBuilder b(&comp, call);
  std::map<const HloInstruction*, HloInstruction*> map;
  for (const auto& up : callee.instructions()) {
    const HloInstruction& inst = *up;
    if (inst.opcode() == HloOpcode::kParameter) {
      map[&inst] = call->operand(inst.parameter_number());
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst.operands()) operands.push_back(map.at(op));
    auto clone = CloneInstruction(inst, operands, b.UniqueName(inst.name()));
    map[&inst] = comp.AddInstructionBefore(std::move(clone), call);
  }
  call->ReplaceAllUsesWith(map.at(callee.root_instruction()));
  comp.RemoveInstruction(call);
}

}  // namespace

StatusOr<bool> CallInliner::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  bool changed = false;
  for (int round = 0; round < 64; ++round) {
    std::vector<HloInstruction*> calls;
    for (const auto& i : entry->instructions()) {
      if (IsInlinable(*i)) calls.push_back(i.get());
    }
    if (calls.empty()) break;
    for (HloInstruction* c : calls) Inline(*entry, c);
    changed = true;
  }
  return changed;
}

}  // namespace tpusim::compiler
