#include "compiler/passes/loop_region.h"

#include <fmt/format.h>

#include <charconv>

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsLoopBegin(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == kLoopBeginTarget;
}

bool IsLoopEnd(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == kLoopEndTarget;
}

bool IsLoopBreak(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == kLoopBreakTarget;
}

bool IsLoopMarker(const HloInstruction& inst) {
  return IsLoopBegin(inst) || IsLoopEnd(inst) || IsLoopBreak(inst);
}

int64_t LoopTrips(const HloInstruction& begin) {
  if (!IsLoopBegin(begin)) return -1;
  const std::string& s = begin.backend_config();
  int64_t trips = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), trips);
  if (ec != std::errc() || end != s.data() + s.size() || trips < 0) return -1;
  return trips;
}

const HloInstruction* LoopRegions::InnermostOf(const HloInstruction* inst) const {
  auto it = innermost.find(inst);
  return it == innermost.end() ? nullptr : it->second;
}

std::vector<const HloInstruction*> LoopRegions::Enclosing(const HloInstruction* inst) const {
  std::vector<const HloInstruction*> out;
  const HloInstruction* r = InnermostOf(inst);
  while (r != nullptr) {
    out.push_back(r);
    auto p = parent.find(r);
    r = p == parent.end() ? nullptr : p->second;
  }
  return out;
}

StatusOr<LoopRegions> FindLoopRegions(const hlo::HloComputation& comp) {
  LoopRegions out;
  std::vector<const HloInstruction*> open;
  for (const auto& up : comp.instructions()) {
    const HloInstruction* inst = up.get();
    if (IsLoopEnd(*inst)) {
      if (open.empty() || inst->operand_count() != 2 || inst->operand(0) != open.back()) {
        return InvalidArgument(fmt::format("%{}: a {} whose operand 0 is not the innermost open {}",
                                           inst->name(), kLoopEndTarget, kLoopBeginTarget));
      }
      out.innermost[inst] = open.back();
      out.end_of[open.back()] = inst;
      open.pop_back();
      continue;
    }
    if (!open.empty()) out.innermost[inst] = open.back();
    if (IsLoopBegin(*inst)) {
      if (!open.empty()) out.parent[inst] = open.back();
      open.push_back(inst);
    }
  }
  if (!open.empty()) {
    return InvalidArgument(fmt::format("%{}: a {} without a {}", open.back()->name(),
                                       kLoopBeginTarget, kLoopEndTarget));
  }
  return out;
}

}  // namespace tpusim::compiler
