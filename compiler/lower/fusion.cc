#include "compiler/lower/fusion.h"

#include <algorithm>

#include "compiler/hlo/computation.h"
#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool HasNoCode(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kAfterAll:
      return true;
    default:
      return IsAliasOfOperand(inst);
  }
}

bool IsFusible(const HloInstruction& inst) {
  if (!HasVpuFunction(inst.opcode()) || !inst.shape().IsArray()) return false;
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().IsArray()) return false;
  }
  return true;
}

// The instruction whose buffer `inst` reads (through reshapes, bitcasts, copies, virtual
// broadcasts, ..., and get-tuple-elements of tuples, which share their element's buffer).
const HloInstruction* Producer(const HloInstruction* inst) {
  while (true) {
    if (IsAliasOfOperand(*inst)) {
      inst = inst->operand(0);
    } else if (inst->opcode() == HloOpcode::kGetTupleElement &&
               inst->operand(0)->opcode() == HloOpcode::kTuple) {
      inst = inst->operand(0)->operand(inst->tuple_index());
    } else {
      return inst;
    }
  }
}

}  // namespace

ElementwiseGroups FormElementwiseGroups(const hlo::HloModule& module, size_t max_members) {
  ElementwiseGroups out;
  std::vector<const HloInstruction*> current;
  auto close = [&] {
    if (current.size() >= 2) {
      for (const HloInstruction* m : current) out.group_of[m] = out.groups.size();
      out.groups.push_back(current);
    }
    current.clear();
  };
  auto member = [&](const HloInstruction* i) {
    return std::find(current.begin(), current.end(), i) != current.end();
  };
  for (const auto& up : module.entry_computation()->instructions()) {
    const HloInstruction* inst = up.get();
    if (HasNoCode(*inst)) continue;
    if (!IsFusible(*inst)) {
      close();
      continue;
    }
    bool joins = !current.empty() && current.size() < max_members &&
                 inst->shape().dimensions() == current.front()->shape().dimensions();
    for (const HloInstruction* op : inst->operands()) {
      if (!joins) break;
      joins = member(op) || !member(Producer(op));
    }
    if (!joins) close();
    current.push_back(inst);
  }
  close();
  return out;
}

}  // namespace tpusim::compiler
