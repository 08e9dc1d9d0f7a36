#include "compiler/passes/zero_sized_elimination.h"

#include <memory>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// Instructions whose effect is more than their (empty) value, and those already constant.
bool Keeps(HloOpcode op) {
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kCustomCall:
    case HloOpcode::kWhile:
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kFusion:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

bool IsZeroSized(const HloInstruction& inst) {
  const hlo::Shape& s = inst.shape();
  if (!s.IsArray() || Keeps(inst.opcode())) return false;
  for (int64_t d : s.dimensions()) {
    if (d == 0) return true;
  }
  return false;
}

}  // namespace

StatusOr<bool> ZeroSizedHloElimination::Run(hlo::HloModule& module) {
  return RewriteEach(module, IsZeroSized, [](hlo::HloComputation& comp, HloInstruction* inst) {
    HloBuilder b(&comp, inst);
    auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant, inst->shape(),
                                              b.UniqueName(inst->name() + ".empty"));
    c->set_location(inst->location());
    c->mutable_metadata() = inst->metadata();
    HloInstruction* empty = b.Add(std::move(c));
    inst->ReplaceAllUsesWith(empty);
    const std::string name = inst->name();
    comp.RemoveInstruction(inst);
    empty->set_name(name);
  });
}

}  // namespace tpusim::compiler
