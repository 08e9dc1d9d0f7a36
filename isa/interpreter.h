// Interpreter: the golden, untimed semantics of a Program (docs/isa.md): a step loop that executes
// every instruction through its one definition (execute.h) on the architectural state
// (machine_state.h), with the control rules of control.h.
// There is no time: a DMA completes when it issues (its flag is incremented at once). Several cores
// interleave deterministically: core 0 runs until it halts or blocks (sync.wait on a flag that is
// too low, a barrier or a collective whose group has not all arrived), then core 1, ...,
// round-robin, until every core has halted. A round in which no core makes progress is a deadlock
// -> an error listing what each core waits for; more work than `max_instructions` (instructions
// plus their element operations: InterpreterOptions) -> ResourceExhausted. Never hangs.
//
// Runtime errors (InvalidArgument) name the core, the instruction index, its source line when
// known, the mnemonic and the problem, e.g.
//   "core 0 instruction 3 (mm.tasm:7) mxu.matmul: k=16 but the active weights have K=8".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "isa/loop_structure.h"
#include "isa/machine_state.h"
#include "isa/memory.h"
#include "isa/memory_sizes.h"
#include "isa/program.h"

namespace tpusim::isa {

/// InterpreterOptions::max_instructions by default (`tpusim exec --max-instructions`).
inline constexpr uint64_t kDefaultWorkBudget = 100'000'000'000;

struct InterpreterOptions {
  /// Work budget over all cores: every instruction executed counts kInstructionWorkUnits (4096,
  /// work_units.h; every loop trip counts), plus its element operations (InterpreterWorkUnits: a
  /// DMA's bytes and rows, an mxu.matmul's multiply-accumulates and outputs, a vector op's
  /// elements, a collective's elements times its group size, each weighted by its measured host
  /// time; a unit is about 0.3 ns), charged before it runs, so the budget bounds the time even
  /// for a DMA whose zero strides repeat a small box millions of times, a 2^48-MAC matmul or a
  /// 2^31-trip loop of nop. `tpusim exec` and `run` give the same budget to the simulator
  /// (sim::SimOptions::max_work). The default, 10^11, is about 30 s of one engine and admits
  /// about 2.4e7 instructions.
  uint64_t max_instructions = kDefaultWorkBudget;
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
  SparseMemory& vmem(int core) { return state_.cores[core].vmem; }
  SparseMemory& smem(int core) { return state_.cores[core].smem; }
  SparseMemory& hbm(int core) { return state_.memory(MemSpace::kHbm, core); }
  SparseMemory& host() { return state_.host; }
  /// The memory `space` of `core` (kAcc is not byte-addressed: use mxu()).
  SparseMemory& memory(MemSpace space, int core) { return state_.memory(space, core); }
  const MxuState& mxu(int core, int index) const { return state_.cores[core].mxus[index]; }
  uint32_t flag(int core, int flag) const { return state_.cores[core].flags[flag]; }
  /// The whole architectural state (machine_state.h).
  MachineState& state() { return state_; }
  /// Instructions executed so far, all cores.
  uint64_t executed() const { return executed_; }
  const MemorySizes& sizes() const { return sizes_; }

 private:
  struct LoopFrame {
    size_t start = 0;  // first body instruction
    uint64_t remaining = 0;
  };
  // Control state of a core; its architectural state is state_.cores[core].
  struct Control {
    size_t pc = 0;
    bool halted = false;
    bool arrived = false;  // waiting at a barrier/collective for the rest of its group
    std::vector<LoopFrame> loops;
    LoopStructure loops_of_code{{}};  // the code's ctrl.loop / ctrl.endloop pairs
  };
  enum class StepResult { kProgress, kBlocked, kHalted };

  StatusOr<StepResult> Step(int core);
  Status CountInstruction(int core);
  // Adds `units` to the work budget (InterpreterOptions::max_instructions); ResourceExhausted past
  // it, naming `core`'s instruction.
  Status ChargeWork(int core, uint64_t units);
  Status Error(int core, size_t index, const std::string& message) const;
  // "core C instruction I (file:line) mnemonic": where an error happened.
  std::string Where(int core, size_t index) const;
  Status Execute(int core, const Instruction& inst);
  StatusOr<bool> TryRendezvous(int core);

  MemorySizes sizes_;
  InterpreterOptions options_;
  Program program_;
  MachineState state_;
  std::vector<Control> cores_;
  uint64_t executed_ = 0;
  uint64_t work_ = 0;  // executed_ + the elements of every DMA run
};

}  // namespace tpusim::isa
