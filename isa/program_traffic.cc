#include "isa/program_traffic.h"

#include <algorithm>
#include <map>
#include <vector>

#include "isa/footprint.h"

namespace tpusim::isa {
namespace {

// ctrl.loop index -> trips of a loop left by ctrl.break_unless (its `trips` + 1).
std::map<size_t, uint64_t> BranchLoopTrips(const CoreProgram& core) {
  std::vector<size_t> open;
  std::map<size_t, uint64_t> break_trips;
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const Opcode op = core.instructions[i].opcode;
    if (op == Opcode::kCtrlLoop) open.push_back(i);
    if (op == Opcode::kCtrlEndLoop && !open.empty()) open.pop_back();
    if (op == Opcode::kCtrlBreakUnless && !open.empty()) {
      break_trips[open.back()] = core.instructions[i].As<op::CtrlBreakUnless>().trips + 1;
    }
  }
  return break_trips;
}

}  // namespace

double ProgramDmaBytes(const Program& program) {
  double total = 0;
  for (const CoreProgram& core : program.cores) {
    const std::map<size_t, uint64_t> break_trips = BranchLoopTrips(core);
    std::vector<double> trips{1};  // executions of the current instruction, per open loop
    for (size_t i = 0; i < core.instructions.size(); ++i) {
      const Instruction& inst = core.instructions[i];
      switch (inst.opcode) {
        case Opcode::kCtrlLoop: {
          uint64_t count = inst.As<op::CtrlLoop>().count;
          if (auto b = break_trips.find(i); b != break_trips.end()) {
            count = std::min(count, b->second);
          }
          trips.push_back(trips.back() * static_cast<double>(count));
          break;
        }
        case Opcode::kCtrlEndLoop:
          if (trips.size() > 1) trips.pop_back();
          break;
        case Opcode::kDmaHbmToVmem:
        case Opcode::kDmaVmemToHbm:
        case Opcode::kDmaGather:
        case Opcode::kDmaScatter:
          total += trips.back() * DmaBytesMovedDouble(inst);
          break;
        default:
          break;
      }
    }
  }
  return total;
}

}  // namespace tpusim::isa
