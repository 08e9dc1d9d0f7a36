#include "isa/loop_structure.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/check.h"
#include "isa/opcode.h"

namespace tpusim::isa {

LoopStructure::LoopStructure(const std::vector<Instruction>& code) {
  std::vector<size_t> open;  // entries of loops_ not closed yet, innermost last
  for (size_t i = 0; i < code.size(); ++i) {
    switch (code[i].opcode) {
      case Opcode::kCtrlLoop:
        open.push_back(loops_.size());
        loops_.push_back(Loop{i});
        break;
      case Opcode::kCtrlEndLoop:
        if (open.empty()) {
          if (status_.ok()) {
            status_ = InvalidArgument("ctrl.endloop without a matching ctrl.loop");
            error_index_ = i;
          }
          break;
        }
        loops_[open.back()].end = i;
        open.pop_back();
        break;
      case Opcode::kCtrlBreakUnless:
        if (!open.empty()) {
          uint64_t& trips = loops_[open.back()].break_trips;
          trips = std::min<uint64_t>(trips, uint64_t{code[i].As<op::CtrlBreakUnless>().trips} + 1);
        }
        break;
      default:
        break;
    }
  }
  if (status_.ok() && !open.empty()) {
    status_ = InvalidArgument("ctrl.loop without a matching ctrl.endloop");
    error_index_ = loops_[open.back()].begin;
  }
}

const LoopStructure::Loop* LoopStructure::Find(size_t loop) const {
  auto it = std::lower_bound(loops_.begin(), loops_.end(), loop,
                             [](const Loop& l, size_t index) { return l.begin < index; });
  return it != loops_.end() && it->begin == loop ? &*it : nullptr;
}

size_t LoopStructure::EndOf(size_t loop) const {
  const Loop* l = Find(loop);
  TPUSIM_CHECK(l != nullptr && l->end != static_cast<size_t>(-1))
      << "ctrl.loop without ctrl.endloop";
  return l->end;
}

uint64_t LoopStructure::AssumedTrips(size_t loop, uint64_t count) const {
  const Loop* l = Find(loop);
  return l != nullptr ? std::min(count, l->break_trips) : count;
}

Status CheckLoopDepth(size_t open_loops) {
  if (open_loops >= static_cast<size_t>(kMaxLoopDepth)) {
    return InvalidArgument(fmt::format("loops nested deeper than {}", kMaxLoopDepth));
  }
  return OkStatus();
}

StatusOr<bool> BreakUnlessLeaves(MachineState& state, int core, const op::CtrlBreakUnless& b) {
  if (b.space != MemSpace::kHbm && b.space != MemSpace::kVmem && b.space != MemSpace::kSmem) {
    return InvalidArgument(fmt::format("space={} (hbm, vmem or smem)", Name(b.space)));
  }
  uint8_t pred = 0;
  if (Status st = state.memory(b.space, core).Read(b.addr, &pred, 1); !st.ok()) {
    return InvalidArgument("addr " + st.message());
  }
  return pred == 0;
}

}  // namespace tpusim::isa
