#include "sim/simulator.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "isa/encoding.h"
#include "isa/memory_sizes.h"
#include "sim/chip/system.h"
#include "sim/core/data_path.h"
#include "sim/core/machine_state.h"

namespace tpusim::sim {

StatusOr<MxuModelKind> ParseMxuModelKind(std::string_view name) {
  if (name == "fast") return MxuModelKind::kFast;
  if (name == "pe") return MxuModelKind::kPe;
  return InvalidArgument(fmt::format("--mxu-model: expected 'fast' or 'pe', got '{}'", name));
}

StatusOr<SimResult> Simulator::Run(const isa::Program& program,
                                   const std::vector<isa::DataSegment>& initial) const {
  TPUSIM_RETURN_IF_ERROR(isa::CheckProgramStructure(program));
  if (config_.clock_hz <= 0) return InvalidArgument("chip.clock_hz must be positive");
  const isa::MemorySizes sizes = isa::MemorySizes::FromChipConfig(config_);
  TPUSIM_ASSIGN_OR_RETURN(MachineState state, MachineState::Create(sizes, program));
  for (size_t i = 0; i < initial.size(); ++i) {
    const isa::DataSegment& d = initial[i];
    if (d.space == isa::MemSpace::kAcc ||
        (d.space != isa::MemSpace::kHost && (d.core < 0 || d.core >= program.num_cores()))) {
      return InvalidArgument(fmt::format("initial segment {}: no {} memory of core {}", i,
                                         isa::Name(d.space), d.core));
    }
    Status st = state.memory(d.space, d.core).Write(d.address, d.bytes.data(), d.bytes.size());
    if (!st.ok()) return InvalidArgument(fmt::format("initial segment {}: {}", i, st.message()));
  }
  // Loop structure, as the interpreter's Load checks it.
  for (int c = 0; c < program.num_cores(); ++c) {
    int depth = 0;
    const auto& insts = program.cores[c].instructions;
    for (size_t i = 0; i < insts.size(); ++i) {
      if (insts[i].opcode == isa::Opcode::kCtrlLoop) ++depth;
      if (insts[i].opcode == isa::Opcode::kCtrlEndLoop && --depth < 0) {
        return InvalidArgument(fmt::format(
            "core {} instruction {} ctrl.endloop: ctrl.endloop without a matching ctrl.loop", c,
            i));
      }
    }
    if (depth > 0) {
      return InvalidArgument(fmt::format("core {}: ctrl.loop without a matching ctrl.endloop", c));
    }
  }

  DataPath data(state, program, options_.compute_values);
  System::Options sys_options;
  sys_options.mxu_model = options_.mxu_model;
  sys_options.trace = options_.trace;
  sys_options.trace_limit = options_.trace_max_events;
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<System> system,
                          System::Create(config_, program, &data, sys_options));
  Engine engine(options_.step_order, options_.step_seed);
  if (options_.max_seconds < 0 || std::isnan(options_.max_seconds)) {
    return InvalidArgument(
        fmt::format("--max-seconds: expected a non-negative number, got {}", options_.max_seconds));
  }
  if (options_.max_seconds > 0) {
    // The deadline counts from here: setup above is bounded by the program's size. A limit too
    // large for the clock's range means no limit.
    const auto now = std::chrono::steady_clock::now();
    const std::chrono::duration<double> limit(options_.max_seconds);
    if (limit < std::chrono::steady_clock::time_point::max() - now) {
      engine.set_deadline(
          now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(limit),
          options_.max_seconds);
    }
  }
  system->AddTo(engine);
  TPUSIM_ASSIGN_OR_RETURN(Cycles end, engine.Run(options_.max_cycles));

  std::string stuck;
  for (auto& core : system->cores()) {
    if (!core->sequencer().finished()) stuck += "\n  " + core->sequencer().BlockedReason();
  }
  if (!stuck.empty()) return InvalidArgument("deadlock: no core can make progress:" + stuck);

  SimResult r;
  r.clock_hz = config_.clock_hz;
  r.config_name = config_.name;
  const int n = program.num_cores();
  const int chips_used = n == 0 ? 0 : (n - 1) / static_cast<int>(config_.tensorcores) + 1;
  // The headline peak is bf16, or int8 on a chip without a bf16 path (TPU v1), as `config show`.
  const double per_core =
      config_.core.mxu.bf16 ? config_.PeakBf16FlopsPerCore() : config_.PeakInt8OpsPerCore();
  r.peak_flops_per_s = per_core * n;
  r.hbm_bytes_per_s = config_.hbm.bandwidth_bytes_per_s * chips_used;
  r.mxu_rows = config_.core.mxu.rows;
  r.mxu_cols = config_.core.mxu.cols;
  r.mxus_per_core = config_.core.mxu.count;
  r.events = engine.events();
  Cycles last(0);
  for (auto& core : system->cores()) {
    CoreResult cr = core->Finish(end, program);
    last = std::max(last, cr.cycles);
    r.instructions_executed += core->sequencer().executed();
    r.cores.push_back(std::move(cr));
  }
  // The run's length: the last instruction completion of any core (the engine may have stepped a
  // final bookkeeping cycle after it).
  r.cycles = last;
  // Accumulators (from the MXU models) and flags (from the sequencers) into the final state.
  const size_t acc_words =
      static_cast<size_t>(std::max<int64_t>(sizes.accumulator_rows, 0) * sizes.mxu_cols);
  for (auto& core : system->cores()) {
    std::vector<std::vector<uint32_t>> accs;
    for (auto& m : core->mxus()) {
      const MxuAccumulators& a = m->accumulators();
      std::vector<uint32_t> words(acc_words, 0);
      for (int64_t row = 0; row < a.rows(); ++row) {
        for (int64_t col = 0; col < a.cols() && col < sizes.mxu_cols; ++col) {
          size_t idx = static_cast<size_t>(row * sizes.mxu_cols + col);
          if (idx >= words.size()) words.resize(idx + 1, 0);
          words[idx] = a.word(row, col);
        }
      }
      accs.push_back(std::move(words));
    }
    state.acc.push_back(std::move(accs));
    state.flags.push_back(core->sequencer().flags());
  }
  const Interconnect& ic = system->interconnect();
  const TransferNetwork& net = system->network();
  for (int link : ic.links()) r.ici_links.push_back(net.resource_path(link));
  for (int c = 0; c < chips_used; ++c) {
    r.host_paths.push_back(net.resource_path(ic.host(c)));
    if (config_.hbm.shared_by_cores) {
      r.hbm_paths.push_back(net.resource_path(ic.hbm(c, 0)));
    } else {
      for (int k = 0; k < config_.tensorcores && c * config_.tensorcores + k < n; ++k) {
        r.hbm_paths.push_back(net.resource_path(ic.hbm(c, k)));
      }
    }
  }
  r.hlo_names = program.hlo_names;
  r.stats = system->stats();
  r.trace_tracks = std::move(system->trace_tracks());
  r.trace_events = std::move(system->trace_events());
  r.trace_truncated = system->trace_truncated();
  r.final_state = std::move(state);
  return r;
}

}  // namespace tpusim::sim
