// What an instruction reads and writes, as scoreboard regions (scoreboard.h), and how the simulator
// classifies it (which unit queue, which stall category).
#pragma once

#include <cstdint>
#include <vector>

#include "isa/instruction.h"
#include "isa/program.h"
#include "sim/core/scoreboard.h"

namespace tpusim::sim {

/// The members of the replica group of table entry `group` that contains `core` (empty if none).
std::vector<int32_t> GroupMembers(const isa::Program& program, uint64_t group, int core);

/// The regions `inst`, executed by global core `core`, reads and writes on that core (plus the
/// host). A remote DMA's destination is not included: the remote core synchronizes on its
/// `dst_flag`. `acc_row_bytes` is unused for accumulator regions (they count rows).
Footprint InstructionFootprint(const isa::Instruction& inst, int core, const isa::Program& program);

}  // namespace tpusim::sim
