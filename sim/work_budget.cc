#include "sim/work_budget.h"

#include <fmt/format.h>

#include "common/saturating.h"
#include "isa/opcode.h"
#include "isa/work_units.h"

namespace tpusim::sim {
namespace {

// The PE steps of an MXU instruction on the PE-level model (0 for other instructions).
uint64_t PeSteps(const isa::Instruction& inst, const config::ChipConfig& config) {
  const uint64_t rows = static_cast<uint64_t>(config.core.mxu.rows);
  const uint64_t cols = static_cast<uint64_t>(config.core.mxu.cols);
  if (inst.opcode == isa::Opcode::kMxuMatmul) {
    const uint64_t m = inst.As<isa::op::MxuMatmul>().m;
    return SaturatingProduct({rows, cols, SaturatingAdd(m, SaturatingAdd(rows, cols))});
  }
  if (inst.opcode == isa::Opcode::kMxuLoadWeights) return SaturatingProduct({rows, cols, rows});
  return 0;
}

}  // namespace

uint64_t SimulatorWorkUnits(const isa::Instruction& inst, const config::ChipConfig& config,
                            const SimOptions& options) {
  uint64_t units = isa::kInstructionWorkUnits;
  if (options.compute_values) {
    const isa::MemorySizes sizes = isa::MemorySizes::FromChipConfig(config);
    units = SaturatingAdd(units, isa::InterpreterWorkUnits(inst, sizes));
  }
  if (options.mxu_model == MxuModelKind::kPe) units = SaturatingAdd(units, PeSteps(inst, config));
  return units;
}

std::vector<uint64_t> SimulatorWorkCosts(const isa::CoreProgram& core,
                                         const config::ChipConfig& config,
                                         const SimOptions& options) {
  std::vector<uint64_t> costs;
  costs.reserve(core.instructions.size());
  for (const isa::Instruction& inst : core.instructions) {
    costs.push_back(SimulatorWorkUnits(inst, config, options));
  }
  return costs;
}

uint64_t LeastWorkUnits(const isa::Program& program, const config::ChipConfig& config,
                        const SimOptions& options) {
  // MinimumWorkUnits adds kInstructionWorkUnits itself: the element part only.
  return isa::MinimumWorkUnits(program, [&](const isa::Instruction& inst) {
    return SimulatorWorkUnits(inst, config, options) - isa::kInstructionWorkUnits;
  });
}

Status CheckWorkBeforeRun(const isa::Program& program, const config::ChipConfig& config,
                          const SimOptions& options, bool fast_forward) {
  if (options.max_work == 0 || fast_forward) return OkStatus();
  const uint64_t least = LeastWorkUnits(program, config, options);
  if (least <= options.max_work) return OkStatus();
  return ResourceExhausted(fmt::format(
      "{}: the simulation does at least {} units of work (every instruction {} plus, with "
      "values, its element operations and, on the PE-level MXU model, its PE steps; over all "
      "cores and loop trips), more than the instruction budget of {}: run it with "
      "--max-instructions {} or more",
      program.source_file.empty() ? "<program>" : program.source_file, least,
      isa::kInstructionWorkUnits, options.max_work, least));
}

Status WorkBudgetExhausted(uint64_t work, uint64_t max_work, uint64_t now) {
  return ResourceExhausted(fmt::format(
      "simulation exceeded the instruction budget of {} units at cycle {} ({} units issued; an "
      "instruction counts {} plus, with values, its element operations): raise it with "
      "--max-instructions (SimOptions::max_work) or check for a runaway loop",
      max_work, now, work, isa::kInstructionWorkUnits));
}

}  // namespace tpusim::sim
