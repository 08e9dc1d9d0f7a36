#include "isa/program_traffic.h"

#include <vector>

#include "isa/footprint.h"
#include "isa/loop_structure.h"

namespace tpusim::isa {

double ProgramDmaBytes(const Program& program) {
  double total = 0;
  for (const CoreProgram& core : program.cores) {
    const LoopStructure loops(core.instructions);
    std::vector<double> trips{1};  // executions of the current instruction, per open loop
    for (size_t i = 0; i < core.instructions.size(); ++i) {
      const Instruction& inst = core.instructions[i];
      switch (inst.opcode) {
        case Opcode::kCtrlLoop: {
          const uint64_t count = loops.AssumedTrips(i, inst.As<op::CtrlLoop>().count);
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
