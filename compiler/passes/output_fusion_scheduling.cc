#include "compiler/passes/output_fusion_scheduling.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "compiler/passes/loop_region.h"
#include "compiler/passes/data_formatting.h"
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

bool SameElementsAndLastDim(const HloInstruction& a, const HloInstruction& b) {
  return a.shape().IsArray() && b.shape().IsArray() && a.shape().rank() > 0 &&
         b.shape().rank() > 0 && a.shape().ElementCount() == b.shape().ElementCount() &&
         a.shape().dimensions().back() == b.shape().dimensions().back();
}

Window WalkWindow(const std::vector<std::unique_ptr<HloInstruction>>& list, size_t d,
                  const std::set<const HloInstruction*>& placed) {
  const HloInstruction* mxu = list[d].get();  // the dot, convolution or first elementwise op
  const bool mxu_op = mxu->opcode() == HloOpcode::kDot || mxu->opcode() == HloOpcode::kConvolution;
  std::set<const HloInstruction*> fused{mxu}, deferred_set;
  Window w;
  size_t seen = 0;
  for (size_t j = d + 1; j < list.size() && seen < kWindow; ++j) {
    const HloInstruction* x = list[j].get();
    if (placed.count(x) > 0) continue;
    ++seen;
    if (IsLoopMarker(*x) || hlo::IsCollective(x->opcode())) break;
    bool on_fused = false, on_deferred = false;
    for (const HloInstruction* op : x->operands()) {
      on_fused = on_fused || fused.count(op) > 0;
      on_deferred = on_deferred || deferred_set.count(op) > 0;
    }
    // Fusible: an elementwise op of D's dimensions, or of a view of D's (a reshape with its
    // elements and its last dimension: canonicalize's result reshape of a batched dot) — or that
    // view itself.
    const bool view_of_fused = ((x->opcode() == HloOpcode::kReshape && !MovesData(*x)) ||
                                x->opcode() == HloOpcode::kBitcast) &&
                               x->shape().IsArray() && SameElementsAndLastDim(*x, *mxu);
    const bool fusible = view_of_fused ||
                         (hlo::IsElementwise(x->opcode()) && x->shape().IsArray() &&
                          (x->shape().dimensions() == mxu->shape().dimensions() ||
                           (mxu_op && SameElementsAndLastDim(*x, *mxu))));
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

// Whether the lowering gives `x` code of its own (parameters, constants, tuples, views and
// broadcasts, which their readers load themselves, do not end an elementwise run).
bool EmitsKernel(const HloInstruction& x) {
  switch (x.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
      return false;
    case HloOpcode::kReshape:
      return MovesData(x);
    default:
      return true;
  }
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
  // Loop-region depth before each instruction (markers never move): inside a region, loop
  // fusions are not reordered, since the lowering updates the loop state in place.
  std::vector<int> depth(list.size() + 1, 0);
  for (size_t i = 0; i < list.size(); ++i) {
    depth[i + 1] = depth[i] + (IsLoopBegin(*list[i]) ? 1 : 0) - (IsLoopEnd(*list[i]) ? 1 : 0);
  }
  std::map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < list.size(); ++i) position[list[i].get()] = i;
  auto place = [&](const HloInstruction* x) {
    order.push_back(x);
    placed.insert(x);
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const HloInstruction* x = list[i].get();
    if (placed.count(x) > 0) continue;
    const HloOpcode op = x->opcode();
    const bool mxu = op == HloOpcode::kDot || op == HloOpcode::kConvolution;
    const bool loop =
        hlo::IsElementwise(op) && x->shape().IsArray() && x->shape().rank() > 0 && depth[i] == 0;
    if (!mxu && !loop) {
      place(x);
      continue;
    }
    const Window w = WalkWindow(list, i, placed);
    // Only a window with a fusible consumer is reordered; for a loop fusion, only when an
    // instruction of other dimensions (which would end the run) is moved out of its way.
    bool splits_run = mxu;
    for (const HloInstruction* y : w.independent) {
      splits_run = splits_run ||
                   (EmitsKernel(*y) &&
                    (!y->shape().IsArray() || y->shape().dimensions() != x->shape().dimensions()));
      // An instruction that shares an operand with one it would move above might be planned to
      // update that operand in place (lower/hbm_plan.cc): such a window keeps its order.
      for (const HloInstruction* op : y->operands()) {
        for (const HloInstruction* u : op->users()) {
          auto at = position.find(u);
          if (!mxu && u != y && at != position.end() && at->second >= i &&
              at->second < position.at(y)) {
            splits_run = false;
          }
        }
      }
      if (!mxu && !splits_run) break;
    }
    if (w.followers.empty() || !splits_run) {
      place(x);
      continue;
    }
    for (const HloInstruction* y : w.independent) place(y);
    place(x);
    for (const HloInstruction* y : w.followers) place(y);
    // A loop fusion leaves the rest where it was, so a dot or convolution among it still places its
    // own window (its output fusion).
    if (!mxu) continue;
    for (const HloInstruction* y : w.deferred) place(y);
  }
  bool changed = false;
  for (size_t i = 0; i < list.size(); ++i) changed = changed || order[i] != list[i].get();
  if (changed) entry->ReorderInstructions(order);
  return changed;
}

}  // namespace tpusim::compiler
