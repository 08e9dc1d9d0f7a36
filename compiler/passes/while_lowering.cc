#include "compiler/passes/while_lowering.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/loop_region.h"
#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/while_loop.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

Status Refuse(const hlo::HloModule& m, const HloInstruction& w, const std::string& why) {
  return Unimplemented(FormatDiagnostic(
      m.source_name(), "", w.location(),
      fmt::format("%{} (while): cannot lower: {} (tpusim unrolls a while or makes it an ISA loop "
                  "when its trip count is known at compile time: an induction variable in the "
                  "loop state, compared with a constant, incremented by a constant; a "
                  "data-dependent loop runs as an ISA loop branching on its condition when "
                  "`tpusim run` can count it on the evaluator (values small enough to evaluate); "
                  "otherwise give its count: --trip-count {}=N)",
                  w.name(), why, w.name())));
}

// The count given for `name` or for the loop it was copied from ("w.it3" -> "w").
std::optional<int64_t> GivenTripCount(const std::map<std::string, int64_t>& given,
                                      std::string name) {
  while (true) {
    if (auto it = given.find(name); it != given.end()) return it->second;
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0) return std::nullopt;
    name.resize(dot);
  }
}

// How `w` is lowered: `trips` copies or a region of that many trips (branch = false), or a branch
// loop (branch = true) whose `trips` only a timing-only simulation uses.
struct LoopPlan {
  int64_t trips = 0;
  bool branch = false;
};

// The plan for `w`, or the reason its trip count is not known as a located error.
StatusOr<LoopPlan> PlanLoop(const hlo::HloModule& m, const HloInstruction& w,
                            const std::map<std::string, int64_t>& given,
                            const std::map<std::string, int64_t>& branch) {
  const hlo::TripCount t = hlo::KnownTripCount(w);
  if (t.trips) return LoopPlan{*t.trips, false};
  if (t.over_limit) {
    return Unimplemented(FormatDiagnostic(
        m.source_name(), "", w.location(),
        fmt::format("%{} (while): cannot lower: {}", w.name(), t.reason)));
  }
  // A count the user gave or the evaluator counted is the count of a loop whose trips depend on
  // data: it runs as the real loop does, its condition computed every trip (N + 1 conditions and N
  // bodies in a timing-only run), never as N copies of its body alone.
  if (std::optional<int64_t> n = GivenTripCount(given, w.name())) {
    if (*n > hlo::kMaxWhileTrips) {
      return Unimplemented(FormatDiagnostic(
          m.source_name(), "", w.location(),
          fmt::format("%{} (while): --trip-count {}={}: {}", w.name(), w.name(), *n,
                      hlo::TooManyTripsReason(hlo::kMaxWhileTrips))));
    }
    return LoopPlan{*n, true};
  }
  // A counted 0 (no trip on the run's inputs, or never run: in a conditional branch they do not
  // take) is the loop's initial state: no condition or body to compute for these inputs.
  if (std::optional<int64_t> n = GivenTripCount(branch, w.name())) return LoopPlan{*n, *n > 0};
  return Refuse(m, w, t.reason);
}

// Clones the instructions of `comp` before `w` in `into`, its parameter replaced by `param`; the
// clone of comp's root.
HloInstruction* Inline(hlo::HloComputation& into, HloInstruction* w,
                       const hlo::HloComputation& comp, HloInstruction* param, HloBuilder& b) {
  std::map<const HloInstruction*, HloInstruction*> map;
  for (const auto& up : comp.instructions()) {
    const HloInstruction& inst = *up;
    if (inst.opcode() == HloOpcode::kParameter) {
      map[&inst] = param;
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst.operands()) operands.push_back(map.at(op));
    map[&inst] =
        into.AddInstructionBefore(CloneInstruction(inst, operands, b.UniqueName(inst.name())), w);
  }
  return map.at(comp.root_instruction());
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
// (loop_region.h). A branch loop (`branch`) runs up to kBranchLoopTrips trips, its condition
// inlined first and followed by a break marker that carries `trips` (the timing-only count).
void MakeRegion(hlo::HloComputation& comp, HloInstruction* w, int64_t trips, bool branch) {
  HloBuilder b(&comp, w);
  auto begin = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, w->shape(),
                                                b.UniqueName(w->name() + ".loop_begin"));
  begin->AppendOperand(w->operand(0));
  begin->set_custom_call_target(kLoopBeginTarget);
  begin->set_backend_config(std::to_string(branch ? kBranchLoopTrips : trips), /*braced=*/false);
  HloInstruction* state = b.Add(std::move(begin));
  if (branch) {
    HloInstruction* pred = Inline(comp, w, *w->while_condition(), state, b);
    auto brk = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, hlo::Shape::Tuple({}),
                                                b.UniqueName(w->name() + ".loop_break"));
    brk->AppendOperand(pred);
    brk->set_custom_call_target(kLoopBreakTarget);
    brk->set_backend_config(std::to_string(trips), /*braced=*/false);
    b.Add(std::move(brk));
  }
  HloInstruction* result = Inline(comp, w, *w->while_body(), state, b);
  auto end = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, w->shape(),
                                              b.UniqueName(w->name() + ".loop_end"));
  end->AppendOperand(state);
  end->AppendOperand(result);
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
    TPUSIM_ASSIGN_OR_RETURN(LoopPlan plan, PlanLoop(module, *w, given_, branch_));
    const int64_t trips = plan.trips;
    const int64_t size = trips * w->while_body()->instruction_count();
    if (!plan.branch && added + size <= max_unrolled_) {
      added += size;
      Unroll(*entry, w, trips);
    } else {
      TPUSIM_ASSIGN_OR_RETURN(LoopRegions regions, FindLoopRegions(*entry));
      if (static_cast<int>(regions.Enclosing(w).size()) >= kMaxLoopRegionDepth) {
        return Refuse(module, *w,
                      plan.branch ? fmt::format("its trip count depends on data, and an ISA loop "
                                                "would nest deeper than {} loops",
                                                kMaxLoopRegionDepth)
                                  : fmt::format("{} trips of a {}-instruction body are over the "
                                                "unrolling budget of {}, and an ISA loop would "
                                                "nest deeper than {} loops",
                                                trips, w->while_body()->instruction_count(),
                                                max_unrolled_, kMaxLoopRegionDepth));
      }
      MakeRegion(*entry, w, trips, plan.branch);
    }
    changed = true;
  }
  return changed;
}

}  // namespace tpusim::compiler
