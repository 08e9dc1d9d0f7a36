#include "compiler/passes/output_fusion_scheduling.h"

#include <memory>
#include <set>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/passes/loop_region.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// How far past a dot or convolution the walk looks (instructions).
constexpr size_t kWindow = 64;

// The new order of `list` with D = list[d]'s independent followers moved before it and the
// dependent instructions its fusible consumers do not need moved after them; empty when nothing
// moves.
std::vector<const HloInstruction*> Hoist(const std::vector<std::unique_ptr<HloInstruction>>& list,
                                         size_t d) {
  const HloInstruction* mxu = list[d].get();
  std::set<const HloInstruction*> fused{mxu}, deferred_set;
  std::vector<const HloInstruction*> independent, followers, deferred;
  size_t end = d + 1;
  for (; end < list.size() && end <= d + kWindow; ++end) {
    const HloInstruction* x = list[end].get();
    if (IsLoopBegin(*x) || IsLoopEnd(*x) || hlo::IsCollective(x->opcode())) break;
    bool on_fused = false, on_deferred = false;
    for (const HloInstruction* op : x->operands()) {
      on_fused = on_fused || fused.count(op) > 0;
      on_deferred = on_deferred || deferred_set.count(op) > 0;
    }
    const bool fusible = hlo::IsElementwise(x->opcode()) && x->shape().IsArray() &&
                         x->shape().dimensions() == mxu->shape().dimensions();
    if (!on_fused && !on_deferred) {
      independent.push_back(x);
    } else if (on_fused && !on_deferred && fusible) {
      fused.insert(x);
      followers.push_back(x);
    } else {
      deferred_set.insert(x);
      deferred.push_back(x);
    }
  }
  // Nothing to gain unless an independent or deferred instruction sat among the followers.
  if (followers.empty() || (independent.empty() && deferred.empty())) return {};
  std::vector<const HloInstruction*> order;
  order.reserve(list.size());
  for (size_t i = 0; i < d; ++i) order.push_back(list[i].get());
  order.insert(order.end(), independent.begin(), independent.end());
  order.push_back(mxu);
  order.insert(order.end(), followers.begin(), followers.end());
  order.insert(order.end(), deferred.begin(), deferred.end());
  for (size_t i = end; i < list.size(); ++i) order.push_back(list[i].get());
  bool same = true;
  for (size_t i = 0; i < list.size(); ++i) same = same && order[i] == list[i].get();
  return same ? std::vector<const HloInstruction*>{} : order;
}

}  // namespace

StatusOr<bool> OutputFusionScheduling::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  bool changed = false;
  for (size_t d = 0; d < entry->instructions().size(); ++d) {
    const HloOpcode op = entry->instructions()[d]->opcode();
    if (op != HloOpcode::kDot && op != HloOpcode::kConvolution) continue;
    std::vector<const HloInstruction*> order = Hoist(entry->instructions(), d);
    if (order.empty()) continue;
    const HloInstruction* mxu = entry->instructions()[d].get();
    entry->ReorderInstructions(order);
    changed = true;
    // Continue after the moved dot.
    for (size_t i = 0; i < entry->instructions().size(); ++i) {
      if (entry->instructions()[i].get() == mxu) d = i;
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
