// MachineState: the architectural state of a system running a Program (docs/isa.md), the one copy
// that both the untimed interpreter (interpreter.h) and the cycle-level simulator (sim/) execute
// instructions on (execute.h):
//   per core: VMEM and SMEM (byte-addressed), kNumSyncFlags 32-bit sync flags, and per MXU a shadow
//             and an active weight buffer ([R, C] values) plus accumulator memory
//             ([accumulator_rows, C] 32-bit words, allocated as rows are written);
//   per chip (HBM shared by its cores) or per core (v2/v3: each core owns 1/n): HBM;
//   per system: host memory.
// Control state (program counter, open loops) is not here: it is per engine (the interpreter's step
// loop, the simulator's sequencers) and shares its rules through control.h.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "isa/accumulator_memory.h"
#include "isa/memory.h"
#include "isa/memory_sizes.h"
#include "isa/program.h"
#include "isa/types.h"

namespace tpusim::isa {

/// One MXU's architectural state.
struct MxuState {
  struct Weights {
    bool valid = false;
    bool is_int = false;     // loaded from s8 (int path) or from bf16/f32 (float path)
    int64_t k = 0, n = 0;    // the loaded tile's K x N
    std::vector<float> f;    // [R, C] row-major, bf16-exact values (float path)
    std::vector<int32_t> i;  // [R, C] row-major, s8 values (int path)
  };
  Weights shadow, active;
  AccumulatorMemory acc;  // [accumulator_rows, C] raw 32-bit words (f32 or s32), pages on write
};

/// One TensorCore's architectural state.
struct CoreState {
  CoreState(const MemorySizes& sizes, int id);
  SparseMemory vmem;
  SparseMemory smem;
  std::vector<uint32_t> flags;  // [kNumSyncFlags]
  std::vector<MxuState> mxus;   // [core.mxu.count]
};

struct MachineState {
  MemorySizes sizes;
  std::vector<CoreState> cores;   // [program cores]
  std::vector<SparseMemory> hbm;  // per chip (shared) or per core
  SparseMemory host{"host memory", 0};

  /// Empty memories for `num_cores` cores of `sizes`. InvalidArgument if the system has fewer
  /// cores ("the program has N cores but the system has only M").
  static StatusOr<MachineState> Create(const MemorySizes& sizes, int num_cores);
  /// Writes `segments` into memory; errors are InvalidArgument "<what> <i>: ..." naming the
  /// segment that names no memory of this state or does not fit.
  Status WriteSegments(const std::vector<DataSegment>& segments, std::string_view what);

  int num_cores() const { return static_cast<int>(cores.size()); }
  /// The index into `hbm` of global core `core`'s HBM.
  int HbmIndex(int core) const {
    return sizes.hbm_shared_by_cores ? core / static_cast<int>(sizes.tensorcores_per_chip) : core;
  }
  /// The byte-addressed memory `space` of core `core` (kAcc is not byte-addressed: an internal
  /// error).
  SparseMemory& memory(MemSpace space, int core);
  SparseMemory& vmem(int core) { return cores[core].vmem; }
  /// flags[flag] of `core` += 1 (a DMA's completion; AddToFlag).
  Status BumpFlag(int core, uint64_t flag);
};

/// Adds `value` to the sync flag numbered `flag` whose word is `word`: sync.signal adds its value,
/// a DMA's or a transfer's completion 1. InvalidArgument "flag F overflows 2^32-1", the word
/// unchanged, when the sum passes 2^32-1. The interpreter and the simulator's sequencer both call
/// it.
Status AddToFlag(uint32_t& word, uint64_t value, uint64_t flag);

}  // namespace tpusim::isa
