#include "isa/footprint.h"

#include <algorithm>

namespace tpusim::isa {

Footprint InstructionFootprint(const Instruction& inst, int core, const Program& program) {
  switch (Info(inst.opcode).unit) {
    case Unit::kDma:
      return DmaFootprint(inst, core);
    case Unit::kMxu:
      return MxuFootprint(inst, core);
    case Unit::kVpu:
    case Unit::kXlu:
      return VectorFootprint(inst, core);
    case Unit::kIci:
      return CollectiveFootprint(inst, core, program);
    case Unit::kScalar:
      break;  // scalar instructions touch no memory
  }
  return {};
}

std::vector<int32_t> GroupMembers(const Program& program, uint64_t group, int core) {
  if (group >= program.replica_groups.size()) return {};
  for (const auto& g : program.replica_groups[group].groups) {
    if (std::find(g.begin(), g.end(), core) != g.end()) return g;
  }
  return {};
}

}  // namespace tpusim::isa
