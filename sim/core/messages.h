// The messages a TensorCore's units exchange through ports (sim/engine/port.h).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/units.h"
#include "isa/instruction.h"
#include "isa/opcode.h"

namespace tpusim::sim {

/// Sequencer -> unit: execute `inst` (dynamic instance `seq` of instruction `pc`).
struct Command {
  uint64_t seq = 0;
  int32_t pc = 0;
  isa::Instruction inst;
};

/// Unit -> sequencer. kStarted: the unit took the command from its queue (returns the queue
/// credit). kDone: the instruction's data effect has been applied at `cycle` (scoreboard regions
/// free).
struct Report {
  enum class Kind { kStarted, kDone };
  Kind kind = Kind::kDone;
  uint64_t seq = 0;
  Cycles cycle;
};

/// Sequencer <-> sync hub: barrier arrival / release, and collective arrival / go.
struct SyncMessage {
  int core = 0;           // global core id of the sender (arrivals) or receiver (releases)
  uint64_t group = 0;     // replica-group table index
  uint64_t instance = 0;  // releases: the collective instance id
  isa::Instruction inst;  // collective arrivals: the instruction
};

/// A unit's runtime error with the interpreter's context: "core 0 instruction 3 mxu.matmul: ...".
inline Status InstructionError(int core, const Command& cmd, const Status& st) {
  std::string m = "core ";
  m.append(std::to_string(core)).append(" instruction ").append(std::to_string(cmd.pc));
  m.append(" ").append(isa::Mnemonic(cmd.inst.opcode)).append(": ").append(st.message());
  return Status(st.code(), std::move(m));
}

}  // namespace tpusim::sim
