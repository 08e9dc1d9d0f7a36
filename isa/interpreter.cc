#include "isa/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "common/saturating.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/execute.h"
#include "isa/footprint.h"
#include "isa/loop_structure.h"
#include "isa/work_units.h"

namespace tpusim::isa {

Interpreter::Interpreter(const MemorySizes& sizes, InterpreterOptions options)
    : sizes_(sizes), options_(options) {}

Status Interpreter::Load(const Program& program) {
  TPUSIM_RETURN_IF_ERROR(CheckProgramStructure(program));
  TPUSIM_ASSIGN_OR_RETURN(state_, MachineState::Create(sizes_, program.num_cores()));
  program_ = program;
  executed_ = 0;
  work_ = 0;
  const int n = program.num_cores();
  cores_.assign(static_cast<size_t>(n), Control{});
  // Loop matching (the assembler and the verifier check nesting; a decoded binary may not have
  // been).
  for (int c = 0; c < n; ++c) {
    cores_[c].loops_of_code = LoopStructure(program.cores[c].instructions);
    const LoopStructure& s = cores_[c].loops_of_code;
    if (!s.status().ok()) return Error(c, s.error_index(), s.status().message());
  }
  return state_.WriteSegments(program.data, "data segment");
}

Status Interpreter::Error(int core, size_t index, const std::string& message) const {
  return InvalidArgument(fmt::format("{}: {}", Where(core, index), message));
}

std::string Interpreter::Where(int core, size_t index) const {
  std::string where = fmt::format("core {} instruction {}", core, index);
  const CoreProgram& cp = program_.cores[core];
  if (cp.source_line(index) != kNoSourceLine) {
    where +=
        fmt::format(" ({}:{})", program_.source_file.empty() ? "<source>" : program_.source_file,
                    cp.source_line(index));
  }
  if (index < cp.instructions.size()) {
    where += fmt::format(" {}", Mnemonic(cp.instructions[index].opcode));
  }
  return where;
}

Status Interpreter::Run() {
  const int n = program_.num_cores();
  while (true) {
    bool progress = false, all_halted = true;
    for (int c = 0; c < n; ++c) {
      while (true) {
        TPUSIM_ASSIGN_OR_RETURN(StepResult r, Step(c));
        if (r != StepResult::kProgress) break;
        progress = true;
      }
      all_halted &= cores_[c].halted;
    }
    if (all_halted) return OkStatus();
    if (!progress) {
      std::string msg = "deadlock: no core can make progress:";
      for (int c = 0; c < n; ++c) {
        if (cores_[c].halted) continue;
        const Instruction& inst = program_.cores[c].instructions[cores_[c].pc];
        msg += fmt::format("\n  core {} waits at instruction {}: {}", c, cores_[c].pc,
                           FormatInstruction(inst));
        if (inst.opcode == Opcode::kSyncWait) {
          msg += fmt::format(" (flag {} is {})", inst.As<op::SyncWait>().flag,
                             flag(c, static_cast<int>(inst.As<op::SyncWait>().flag)));
        }
      }
      return InvalidArgument(msg);
    }
  }
}

StatusOr<Interpreter::StepResult> Interpreter::Step(int c) {
  Control& cs = cores_[c];
  std::vector<uint32_t>& flags = state_.cores[c].flags;
  const auto& insts = program_.cores[c].instructions;
  if (cs.halted) return StepResult::kHalted;
  if (cs.pc >= insts.size()) {
    cs.halted = true;  // running off the end is an implicit halt
    return StepResult::kHalted;
  }
  const Instruction& inst = insts[cs.pc];
  switch (inst.opcode) {
    case Opcode::kSyncWait: {
      auto w = inst.As<op::SyncWait>();
      if (flags[w.flag] < w.value) return StepResult::kBlocked;
      flags[w.flag] -= static_cast<uint32_t>(w.value);
      break;
    }
    case Opcode::kSyncBarrier:
    case Opcode::kIciAllReduce:
    case Opcode::kIciAllGather:
    case Opcode::kIciReduceScatter:
    case Opcode::kIciAllToAll:
    case Opcode::kIciCollectivePermute: {
      if (!cs.arrived) {
        cs.arrived = true;
        TPUSIM_RETURN_IF_ERROR(CountInstruction(c));  // counted once, on arrival
      }
      TPUSIM_ASSIGN_OR_RETURN(bool done, TryRendezvous(c));
      // On completion every member's pc has advanced and `arrived` is cleared.
      return done ? StepResult::kProgress : StepResult::kBlocked;
    }
    case Opcode::kCtrlHalt:
      cs.halted = true;
      TPUSIM_RETURN_IF_ERROR(CountInstruction(c));
      return StepResult::kHalted;
    case Opcode::kCtrlLoop: {
      auto l = inst.As<op::CtrlLoop>();
      if (l.count == 0) {
        cs.pc = cs.loops_of_code.EndOf(cs.pc);  // skip to the endloop; the ++pc below passes it
      } else {
        if (Status st = CheckLoopDepth(cs.loops.size()); !st.ok()) {
          return Error(c, cs.pc, st.message());
        }
        cs.loops.push_back({cs.pc + 1, l.count});
      }
      break;
    }
    case Opcode::kCtrlBreakUnless: {
      auto b = inst.As<op::CtrlBreakUnless>();
      if (cs.loops.empty()) return Error(c, cs.pc, "ctrl.break_unless outside a loop");
      StatusOr<bool> leave = BreakUnlessLeaves(state_, c, b);
      if (!leave.ok()) return Error(c, cs.pc, leave.status().message());
      if (*leave) {  // leave the loop: continue after its ctrl.endloop
        cs.pc = cs.loops_of_code.EndOf(cs.loops.back().start - 1);
        cs.loops.pop_back();
      }
      break;
    }
    case Opcode::kCtrlEndLoop: {
      TPUSIM_CHECK(!cs.loops.empty()) << "loop matching was checked at Load";
      LoopFrame& f = cs.loops.back();
      if (--f.remaining > 0) {
        cs.pc = f.start;
        TPUSIM_RETURN_IF_ERROR(CountInstruction(c));
        return StepResult::kProgress;
      }
      cs.loops.pop_back();
      break;
    }
    default: {
      // A DMA's elements, a matmul's MACs, a vector op's elements: charged before it runs.
      TPUSIM_RETURN_IF_ERROR(ChargeWork(c, InterpreterWorkUnits(inst, sizes_)));
      Status st = Execute(c, inst);
      if (!st.ok()) return Error(c, cs.pc, st.message());
    }
  }
  ++cs.pc;
  TPUSIM_RETURN_IF_ERROR(CountInstruction(c));
  return StepResult::kProgress;
}

Status Interpreter::CountInstruction(int c) {
  ++executed_;
  return ChargeWork(c, kInstructionWorkUnits);
}

Status Interpreter::ChargeWork(int c, uint64_t units) {
  work_ = SaturatingAdd(work_, units);
  if (work_ > options_.max_instructions) {
    return ResourceExhausted(fmt::format(
        "{}: instruction budget of {} exhausted (an instruction counts {} plus its element "
        "operations, each weighted by its measured host time: a DMA's bytes and rows, a "
        "matmul's multiply-accumulates and outputs, a vector or collective op's elements); "
        "raise it (tpusim exec --max-instructions) or check for a runaway loop",
        Where(c, cores_[c].pc), options_.max_instructions, kInstructionWorkUnits));
  }
  return OkStatus();
}

Status Interpreter::Execute(int c, const Instruction& inst) {
  switch (Info(inst.opcode).unit) {
    case Unit::kDma:
      return ExecuteDma(state_, c, inst);
    case Unit::kMxu:
      return ExecuteMxu(state_, c, inst);
    case Unit::kVpu:
    case Unit::kXlu:
      return ExecuteVector(state_, c, inst);
    case Unit::kScalar:
      if (inst.opcode == Opcode::kSyncSignal) {
        auto s = inst.As<op::SyncSignal>();
        return AddToFlag(state_.cores[c].flags[s.flag], s.value, s.flag);
      }
      return OkStatus();  // nop
    case Unit::kIci:
      break;
  }
  TPUSIM_CHECK(false) << "unreachable: " << Mnemonic(inst.opcode);
  return OkStatus();
}

StatusOr<bool> Interpreter::TryRendezvous(int c) {
  const Instruction& inst = program_.cores[c].instructions[cores_[c].pc];
  StatusOr<std::vector<int>> members = RendezvousMembers(program_, inst, c);
  if (!members.ok()) return Error(c, cores_[c].pc, members.status().message());
  for (int m : *members) {
    if (!cores_[m].arrived) return false;
  }
  // Everyone is here: the instructions must agree on everything but their addresses.
  std::vector<Instruction> insts;
  for (int m : *members) insts.push_back(program_.cores[m].instructions[cores_[m].pc]);
  if (!SameRendezvous(program_, *members, insts)) return false;  // a member is in another group's
  Status st = CheckRendezvous(*members, insts, c, inst);
  if (!st.ok()) return Error(c, cores_[c].pc, st.message());
  for (const Instruction& i : insts) {  // every member's elements, before the collective runs
    TPUSIM_RETURN_IF_ERROR(ChargeWork(c, InterpreterWorkUnits(i, sizes_, members->size())));
  }
  if (inst.opcode != Opcode::kSyncBarrier) {
    st = ExecuteCollective(state_, program_, *members, insts);
    if (!st.ok()) return Error(c, cores_[c].pc, st.message());
  }
  for (int m : *members) {
    cores_[m].arrived = false;
    ++cores_[m].pc;
  }
  return true;
}

}  // namespace tpusim::isa
