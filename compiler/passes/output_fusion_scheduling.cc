#include "compiler/passes/output_fusion_scheduling.h"

#include <memory>
#include <set>
#include <vector>

#include "compiler/passes/loop_region.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// How far past a dot or convolution the walk looks (instructions).
constexpr size_t kWindow = 64;

// The instructions of D = list[d]'s window (see the header): those not yet placed among the next
// kWindow after D, sorted into independent ones, fusible consumers and the rest.
struct Window {
  std::vector<const HloInstruction*> independent, followers, deferred;
};

Window WalkWindow(const std::vector<std::unique_ptr<HloInstruction>>& list, size_t d,
                  const std::set<const HloInstruction*>& placed) {
  const HloInstruction* mxu = list[d].get();
  std::set<const HloInstruction*> fused{mxu}, deferred_set;
  Window w;
  size_t seen = 0;
  for (size_t j = d + 1; j < list.size() && seen < kWindow; ++j) {
    const HloInstruction* x = list[j].get();
    if (placed.count(x) > 0) continue;
    ++seen;
    if (IsLoopBegin(*x) || IsLoopEnd(*x) || hlo::IsCollective(x->opcode())) break;
    bool on_fused = false, on_deferred = false;
    for (const HloInstruction* op : x->operands()) {
      on_fused = on_fused || fused.count(op) > 0;
      on_deferred = on_deferred || deferred_set.count(op) > 0;
    }
    const bool fusible = hlo::IsElementwise(x->opcode()) && x->shape().IsArray() &&
                         x->shape().dimensions() == mxu->shape().dimensions();
    if (!on_fused && !on_deferred) {
      w.independent.push_back(x);
    } else if (on_fused && !on_deferred && fusible) {
      fused.insert(x);
      w.followers.push_back(x);
    } else {
      deferred_set.insert(x);
      w.deferred.push_back(x);
    }
  }
  return w;
}

}  // namespace

StatusOr<bool> OutputFusionScheduling::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  // One sweep: each dot or convolution not already placed by an earlier one's window places its
  // window's independent instructions, itself, its fusible consumers and the rest; every other
  // instruction keeps its place. O(instructions x kWindow).
  const auto& list = entry->instructions();
  std::vector<const HloInstruction*> order;
  order.reserve(list.size());
  std::set<const HloInstruction*> placed;
  auto place = [&](const HloInstruction* x) {
    order.push_back(x);
    placed.insert(x);
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const HloInstruction* x = list[i].get();
    if (placed.count(x) > 0) continue;
    const HloOpcode op = x->opcode();
    if (op != HloOpcode::kDot && op != HloOpcode::kConvolution) {
      place(x);
      continue;
    }
    const Window w = WalkWindow(list, i, placed);
    // Only a window with a fusible consumer is reordered.
    if (w.followers.empty()) {
      place(x);
      continue;
    }
    for (const HloInstruction* y : w.independent) place(y);
    place(x);
    for (const HloInstruction* y : w.followers) place(y);
    for (const HloInstruction* y : w.deferred) place(y);
  }
  bool changed = false;
  for (size_t i = 0; i < list.size(); ++i) changed = changed || order[i] != list[i].get();
  if (changed) entry->ReorderInstructions(order);
  return changed;
}

}  // namespace tpusim::compiler
