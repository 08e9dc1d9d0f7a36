#include "compiler/passes/while_lowering.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/loop_region.h"

namespace tpusim::compiler {
namespace {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr int64_t kMaxTrips = int64_t{1} << 24;

Status Refuse(const hlo::HloModule& m, const HloInstruction& w, const std::string& why) {
  return Unimplemented(fmt::format(
      "{}:{}:{}: %{} (while): cannot lower: {} (tpusim lowers a while by unrolling it or as an "
      "ISA loop, both of which need a trip count known at compile time: an induction variable "
      "in the loop state, compared with a constant, incremented by a constant)",
      m.source_name(), w.location().line, w.location().column, w.name(), why));
}

// The scalar integer value of a constant instruction.
std::optional<int64_t> IntConstant(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kConstant || !i->shape().IsArray() ||
      !i->shape().dimensions().empty() || i->literal().int_values.size() != 1) {
    return std::nullopt;
  }
  return i->literal().int_values[0];
}

// k if `i` is get-tuple-element(parameter 0 of its computation, k).
std::optional<int64_t> StateIndex(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kGetTupleElement) return std::nullopt;
  const HloInstruction* p = i->operand(0);
  if (p->opcode() != HloOpcode::kParameter || p->parameter_number() != 0) return std::nullopt;
  return i->tuple_index();
}

bool Holds(ComparisonDirection d, int64_t a, int64_t b) {
  switch (d) {
    case ComparisonDirection::kLt:
      return a < b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kEq:
      return a == b;
  }
  return false;
}

// The trip count of `w`, or the reason it is not known.
StatusOr<int64_t> TripCount(const hlo::HloModule& m, const HloInstruction& w) {
  const hlo::HloComputation* cond = w.while_condition();
  const hlo::HloComputation* body = w.while_body();
  const HloInstruction* init = w.operand(0);
  if (cond == nullptr || body == nullptr) return Refuse(m, w, "no condition or body");
  if (init->opcode() != HloOpcode::kTuple) return Refuse(m, w, "the loop state is not a tuple");
  const HloInstruction* cmp = cond->root_instruction();
  if (cmp->opcode() != HloOpcode::kCompare) {
    return Refuse(m, w, "the condition's root is not a compare");
  }
  const std::optional<int64_t> k = StateIndex(cmp->operand(0));
  if (!k) return Refuse(m, w, "the compare's left operand is not an element of the loop state");
  auto init_value = [&](int64_t e) -> std::optional<int64_t> {
    if (e < 0 || e >= init->operand_count()) return std::nullopt;
    return IntConstant(init->operand(e));
  };
  const HloInstruction* root = body->root_instruction();
  if (root->opcode() != HloOpcode::kTuple || root->operand_count() != init->operand_count()) {
    return Refuse(m, w, "the body's root is not a tuple of the loop state");
  }
  // The limit: a constant, or a state element the body passes through unchanged.
  std::optional<int64_t> limit = IntConstant(cmp->operand(1));
  if (!limit) {
    const std::optional<int64_t> j = StateIndex(cmp->operand(1));
    if (j && *j < root->operand_count()) {
      const std::optional<int64_t> same = StateIndex(root->operand(*j));
      if (same && *same == *j) limit = init_value(*j);
    }
  }
  if (!limit) return Refuse(m, w, "the limit is neither a constant nor a constant loop invariant");
  const std::optional<int64_t> start = init_value(*k);
  if (!start) return Refuse(m, w, "the induction variable's initial value is not a constant");
  const HloInstruction* next = root->operand(*k);
  std::optional<int64_t> step;
  if (next->opcode() == HloOpcode::kAdd) {
    for (int a = 0; a < 2 && !step; ++a) {
      const std::optional<int64_t> idx = StateIndex(next->operand(a));
      if (idx && *idx == *k) step = IntConstant(next->operand(1 - a));
    }
  }
  if (!step) return Refuse(m, w, "the induction variable is not incremented by a constant");
  int64_t trips = 0;
  for (int64_t i = *start; Holds(cmp->comparison_direction(), i, *limit); i += *step) {
    if (++trips > kMaxTrips) return Refuse(m, w, fmt::format("more than {} trips", kMaxTrips));
  }
  return trips;
}

// Replaces `w` in `comp` by `trips` copies of its body.
void Unroll(hlo::HloComputation& comp, HloInstruction* w, int64_t trips) {
  const hlo::HloComputation& body = *w->while_body();
  HloBuilder b(&comp, w);
  HloInstruction* state = w->operand(0);
  for (int64_t t = 0; t < trips; ++t) {
    std::map<const HloInstruction*, HloInstruction*> map;
    for (const auto& up : body.instructions()) {
      const HloInstruction& inst = *up;
      if (inst.opcode() == HloOpcode::kParameter) {
        map[&inst] = state;
        continue;
      }
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* op : inst.operands()) operands.push_back(map.at(op));
      auto clone =
          CloneInstruction(inst, operands, b.UniqueName(fmt::format("{}.it{}", inst.name(), t)));
      map[&inst] = comp.AddInstructionBefore(std::move(clone), w);
    }
    state = map.at(body.root_instruction());
  }
  w->ReplaceAllUsesWith(state);
  comp.RemoveInstruction(w);
}

// Replaces `w` in `comp` by a loop region: its body once, between loop_begin and loop_end markers
// (loop_region.h).
void MakeRegion(hlo::HloComputation& comp, HloInstruction* w, int64_t trips) {
  const hlo::HloComputation& body = *w->while_body();
  HloBuilder b(&comp, w);
  auto begin = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, w->shape(),
                                                b.UniqueName(w->name() + ".loop_begin"));
  begin->AppendOperand(w->operand(0));
  begin->set_custom_call_target(kLoopBeginTarget);
  begin->set_backend_config(std::to_string(trips), /*braced=*/false);
  HloInstruction* state = b.Add(std::move(begin));
  std::map<const HloInstruction*, HloInstruction*> map;
  for (const auto& up : body.instructions()) {
    const HloInstruction& inst = *up;
    if (inst.opcode() == HloOpcode::kParameter) {
      map[&inst] = state;
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst.operands()) operands.push_back(map.at(op));
    map[&inst] =
        comp.AddInstructionBefore(CloneInstruction(inst, operands, b.UniqueName(inst.name())), w);
  }
  auto end = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, w->shape(),
                                              b.UniqueName(w->name() + ".loop_end"));
  end->AppendOperand(state);
  end->AppendOperand(map.at(body.root_instruction()));
  end->set_custom_call_target(kLoopEndTarget);
  HloInstruction* e = b.Add(std::move(end));
  w->ReplaceAllUsesWith(e);
  comp.RemoveInstruction(w);
}

}  // namespace

StatusOr<bool> WhileLowering::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  bool changed = false;
  int64_t added = 0;
  while (true) {
    HloInstruction* w = nullptr;
    for (const auto& i : entry->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) {
        w = i.get();
        break;
      }
    }
    if (w == nullptr) {
      // Copied bodies may call computations that hold more loops: inline them and look again.
      TPUSIM_ASSIGN_OR_RETURN(bool inlined, CallInliner().Run(module));
      if (!inlined) break;
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(int64_t trips, TripCount(module, *w));
    const int64_t size = trips * w->while_body()->instruction_count();
    if (added + size <= max_unrolled_) {
      added += size;
      Unroll(*entry, w, trips);
    } else {
      TPUSIM_ASSIGN_OR_RETURN(LoopRegions regions, FindLoopRegions(*entry));
      if (static_cast<int>(regions.Enclosing(w).size()) >= kMaxLoopRegionDepth) {
        return Refuse(module, *w,
                      fmt::format("{} trips of a {}-instruction body are over the unrolling budget "
                                  "of {}, and an ISA loop would nest deeper than {} loops",
                                  trips, w->while_body()->instruction_count(), max_unrolled_,
                                  kMaxLoopRegionDepth));
      }
      MakeRegion(*entry, w, trips);
    }
    changed = true;
  }
  return changed;
}

}  // namespace tpusim::compiler
