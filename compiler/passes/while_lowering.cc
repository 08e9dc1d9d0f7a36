#include "compiler/passes/while_lowering.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

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
  return Unimplemented(fmt::format(
      "{}:{}:{}: %{} (while): cannot lower: {} (tpusim lowers a while by unrolling it or as an "
      "ISA loop, both of which need a trip count known at compile time: an induction variable "
      "in the loop state, compared with a constant, incremented by a constant; to time a "
      "data-dependent loop give its count: --trip-count {}=N)",
      m.source_name(), w.location().line, w.location().column, w.name(), why, w.name()));
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

// The trip count of `w`, or the reason it is not known as a located error.
StatusOr<int64_t> TripCount(const hlo::HloModule& m, const HloInstruction& w,
                            const std::map<std::string, int64_t>& given) {
  const hlo::TripCount t = hlo::KnownTripCount(w);
  if (t.trips) return *t.trips;
  if (std::optional<int64_t> n = GivenTripCount(given, w.name())) return *n;
  return Refuse(m, w, t.reason);
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
    TPUSIM_ASSIGN_OR_RETURN(int64_t trips, TripCount(module, *w, given_));
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
