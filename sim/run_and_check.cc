#include "sim/run_and_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "isa/footprint.h"

namespace tpusim::sim {
namespace {

using Key = std::tuple<int, int>;  // (space, core)

}  // namespace

Status CompareFinalState(const isa::Program& program, isa::Interpreter& interpreter,
                         isa::MachineState& state) {
  // Every byte range the program may write, per (space, core).
  std::map<Key, std::vector<std::pair<uint64_t, uint64_t>>> ranges;
  auto add = [&](isa::MemSpace space, int core, uint64_t lo, uint64_t hi) {
    if (space == isa::MemSpace::kAcc) return;
    if (space == isa::MemSpace::kHost) core = 0;
    ranges[{static_cast<int>(space), core}].emplace_back(lo, hi);
  };
  for (const isa::DataSegment& d : program.data) {
    add(d.space, d.core, d.address, d.address + d.bytes.size());
  }
  for (int c = 0; c < program.num_cores(); ++c) {
    for (const isa::Instruction& inst : program.cores[c].instructions) {
      isa::Footprint f = isa::InstructionFootprint(inst, c, program);
      for (const isa::Region& r : f.writes) add(r.space, c, r.lo, r.hi);
      if (inst.opcode == isa::Opcode::kDmaVmemToRemote) {
        auto d = inst.As<isa::op::DmaVmemToRemote>();
        const uint64_t extent = isa::DmaDestinationExtent(inst);
        if (d.dst_core < static_cast<uint64_t>(program.num_cores())) {
          add(d.dst_space, static_cast<int>(d.dst_core), d.dst, d.dst + extent);
        }
      }
    }
  }
  std::string a, b;
  for (auto& [key, list] : ranges) {
    auto [space_i, core] = key;
    auto space = static_cast<isa::MemSpace>(space_i);
    isa::SparseMemory& sim_mem = state.memory(space, core);
    isa::SparseMemory& ref_mem = interpreter.memory(space, core);
    std::sort(list.begin(), list.end());
    uint64_t done = 0;
    for (auto [lo, hi] : list) {
      lo = std::max(lo, done);
      hi = std::min(hi, sim_mem.capacity());
      if (hi <= lo) continue;
      done = hi;
      a.resize(hi - lo);
      b.resize(hi - lo);
      TPUSIM_RETURN_IF_ERROR(sim_mem.Read(lo, a.data(), a.size()));
      TPUSIM_RETURN_IF_ERROR(ref_mem.Read(lo, b.data(), b.size()));
      if (a != b) {
        size_t i = 0;
        while (a[i] == b[i]) ++i;
        return CheckFailed(fmt::format(
            "simulator and interpreter differ: {} byte {:#x}: simulator {:#04x}, interpreter "
            "{:#04x}",
            sim_mem.name(), lo + i, static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i])));
      }
    }
  }
  for (int c = 0; c < program.num_cores(); ++c) {
    for (size_t m = 0; m < state.cores[c].mxus.size(); ++m) {
      const isa::AccumulatorMemory& ref = interpreter.mxu(c, static_cast<int>(m)).acc;
      const isa::AccumulatorMemory& got = state.cores[c].mxus[m].acc;
      if (auto d = got.FirstDifference(ref)) {
        return CheckFailed(fmt::format(
            "simulator and interpreter differ: core {} mxu {} accumulator word {} (row {}): "
            "simulator {:#010x}, interpreter {:#010x}",
            c, m, d->row * got.cols() + d->col, d->row, d->mine, d->other));
      }
    }
    for (int f = 0; f < isa::kNumSyncFlags; ++f) {
      if (state.cores[c].flags[f] != interpreter.flag(c, f)) {
        return CheckFailed(fmt::format(
            "simulator and interpreter differ: core {} flag {}: simulator {}, interpreter {}", c, f,
            state.cores[c].flags[f], interpreter.flag(c, f)));
      }
    }
  }
  return OkStatus();
}

StatusOr<SimResult> RunAndCheck(const config::ChipConfig& config, const isa::Program& program,
                                const SimOptions& options,
                                const isa::InterpreterOptions& interpreter_options) {
  isa::Interpreter interpreter(isa::MemorySizes::FromChipConfig(config), interpreter_options);
  TPUSIM_RETURN_IF_ERROR(interpreter.Load(program));
  TPUSIM_RETURN_IF_ERROR(interpreter.Run());
  return RunAndCheck(config, program, options, interpreter);
}

StatusOr<SimResult> RunAndCheck(const config::ChipConfig& config, const isa::Program& program,
                                const SimOptions& options, isa::Interpreter& interpreter) {
  TPUSIM_ASSIGN_OR_RETURN(SimResult result, Simulator(config, options).Run(program));
  TPUSIM_RETURN_IF_ERROR(CompareFinalState(program, interpreter, result.final_state));
  return result;
}

}  // namespace tpusim::sim
