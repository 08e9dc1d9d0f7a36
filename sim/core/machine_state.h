// MachineState: the simulator's architectural memories, laid out exactly as isa::Interpreter's (per
// core VMEM and SMEM; HBM per chip when shared by its cores, else per core; one host memory) so
// final states can be compared byte for byte. Accumulators live in the MXU models during a run and
// are copied here at the end; sync flags live in the sequencers and are copied here at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "isa/memory.h"
#include "isa/memory_sizes.h"
#include "isa/program.h"
#include "isa/types.h"

namespace tpusim::sim {

struct MachineState {
  isa::MemorySizes sizes;
  std::vector<isa::SparseMemory> vmem;  // per core
  std::vector<isa::SparseMemory> smem;  // per core
  std::vector<isa::SparseMemory> hbm;   // per chip (shared) or per core
  isa::SparseMemory host{"host memory", 0};
  std::vector<std::vector<std::vector<uint32_t>>>
      acc;                                   // [core][mxu] -> [accumulator_rows * C] words
  std::vector<std::vector<uint32_t>> flags;  // [core][flag]

  /// Memories for `cores` cores of `sizes` (as Interpreter::Load does), then the program's data
  /// segments. InvalidArgument naming the segment if one does not fit.
  static StatusOr<MachineState> Create(const isa::MemorySizes& sizes, const isa::Program& program);

  int HbmIndex(int core) const {
    return sizes.hbm_shared_by_cores ? core / static_cast<int>(sizes.tensorcores_per_chip) : core;
  }
  /// The byte-addressed memory `space` of global core `core` (kAcc is an internal error).
  isa::SparseMemory& memory(isa::MemSpace space, int core);
};

}  // namespace tpusim::sim
