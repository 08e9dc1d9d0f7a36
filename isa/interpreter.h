// Interpreter: the golden, untimed semantics of a Program (docs/isa.md). It executes every
// instruction exactly as the table documents it, on architectural state:
//   per core: VMEM, SMEM, kNumSyncFlags sync flags, and per MXU a shadow and an active weight
//   buffer
//             ([R,C] values) plus accumulator memory (accumulator_rows x C 32-bit words);
//   per chip (HBM shared by its cores) or per core (v2/v3: each core owns 1/n): HBM;
//   per system: host memory.
// There is no time: a DMA completes when it issues (its flag is incremented at once). Several cores
// interleave deterministically: core 0 runs until it halts or blocks (sync.wait on a flag that is
// too low, a barrier or a collective whose group has not all arrived), then core 1, ...,
// round-robin, until every core has halted. A round in which no core makes progress is a deadlock
// -> an error listing what each core waits for; more than `max_instructions` executed ->
// ResourceExhausted. Never hangs.
//
// Runtime errors (InvalidArgument) name the core, the instruction index, its source line when
// known, the mnemonic and the problem, e.g.
//   "core 0 instruction 3 (mm.tasm:7) mxu.matmul: k=16 but the active weights have K=8".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "isa/memory.h"
#include "isa/memory_sizes.h"
#include "isa/program.h"

namespace tpusim::isa {

struct InterpreterOptions {
  uint64_t max_instructions = 1'000'000'000;  // total over all cores (loop iterations count)
};

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
  std::vector<uint32_t> acc;  // [accumulator_rows, C] raw 32-bit words (f32 or s32)
};

class Interpreter {
 public:
  Interpreter(const MemorySizes& sizes, InterpreterOptions options = {});

  /// Resets all state, checks the program's structure and that it fits the system (cores, table
  /// entries), and writes its data segments into memory.
  Status Load(const Program& program);
  /// Runs the loaded program to completion (every core halted). Errors as described above.
  Status Run();

  // Architectural state, for tests, `tpusim exec --dump` and comparisons with the simulator.
  SparseMemory& vmem(int core) { return cores_[core].vmem; }
  SparseMemory& smem(int core) { return cores_[core].smem; }
  SparseMemory& hbm(int core) { return hbm_[HbmIndex(core)]; }
  SparseMemory& host() { return host_; }
  /// The memory `space` of `core` (kAcc is not byte-addressed: use mxu()).
  SparseMemory& memory(MemSpace space, int core);
  const MxuState& mxu(int core, int index) const { return cores_[core].mxus[index]; }
  uint32_t flag(int core, int flag) const { return cores_[core].flags[flag]; }
  /// Instructions executed so far, all cores.
  uint64_t executed() const { return executed_; }
  const MemorySizes& sizes() const { return sizes_; }

 private:
  struct LoopFrame {
    size_t start = 0;  // first body instruction
    uint64_t remaining = 0;
  };
  struct CoreState {
    CoreState(const MemorySizes& s, int id);
    SparseMemory vmem;
    SparseMemory smem;
    std::vector<uint32_t> flags;
    std::vector<MxuState> mxus;
    size_t pc = 0;
    bool halted = false;
    bool arrived = false;  // waiting at a barrier/collective for the rest of its group
    std::vector<LoopFrame> loops;
    std::vector<size_t> loop_match;  // ctrl.loop index -> matching ctrl.endloop index
  };
  enum class StepResult { kProgress, kBlocked, kHalted };

  int HbmIndex(int core) const;
  StatusOr<StepResult> Step(int core);
  Status CountInstruction(int core);
  Status Error(int core, size_t index, const std::string& message) const;
  Status Execute(int core, const Instruction& inst);
  StatusOr<bool> TryRendezvous(int core);

  // Units (interpreter.cc: control/sync/DMA/collectives; interpreter_ops.cc: MXU and VPU).
  Status Dma(int core, const Instruction& inst);
  Status Collective(const std::vector<int>& members, const Instruction& first);
  Status LoadWeights(int core, const Instruction& inst);
  Status Matmul(int core, const Instruction& inst);
  Status Pop(int core, const Instruction& inst);
  Status Vpu(int core, const Instruction& inst);

  MemorySizes sizes_;
  InterpreterOptions options_;
  Program program_;
  std::vector<CoreState> cores_;
  std::vector<SparseMemory> hbm_;
  SparseMemory host_;
  uint64_t executed_ = 0;
};

}  // namespace tpusim::isa
