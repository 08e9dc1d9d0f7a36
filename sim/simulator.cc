#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "common/saturating.h"
#include "config/config_loader.h"
#include "isa/encoding.h"
#include "isa/loop_structure.h"
#include "isa/machine_state.h"
#include "isa/memory_sizes.h"
#include "sim/chip/system.h"
#include "sim/fast_forward.h"
#include "sim/work_budget.h"

namespace tpusim::sim {

StatusOr<MxuModelKind> ParseMxuModelKind(std::string_view name) {
  if (name == "fast") return MxuModelKind::kFast;
  if (name == "pe") return MxuModelKind::kPe;
  return InvalidArgument(fmt::format("--mxu-model: expected 'fast' or 'pe', got '{}'", name));
}

namespace {

// Event cycles between two flushes of the cores' stall attribution (memory vs. flush cost).
constexpr uint64_t kAttributionFlushInterval = 1024;
// Event cycles between two checks of the work budget (SimOptions::max_work).
constexpr uint64_t kWorkCheckInterval = 64;

// {instructions, trips} of instructions [begin, end) run once; `halted` is set at a ctrl.halt.
std::pair<uint64_t, uint64_t> CountRange(const std::vector<isa::Instruction>& insts,
                                         const isa::LoopStructure& loops, size_t begin, size_t end,
                                         bool& halted) {
  uint64_t n = 0, trips = 0;
  for (size_t i = begin; i < end && !halted; ++i) {
    const isa::Opcode op = insts[i].opcode;
    ++n;
    if (op == isa::Opcode::kCtrlHalt) {
      halted = true;
    } else if (op == isa::Opcode::kCtrlLoop) {
      // A loop left by ctrl.break_unless: its trips as a timing-only run assumes them (the
      // body's instructions counted whole on the last trip, too).
      const uint64_t count = loops.AssumedTrips(i, insts[i].As<isa::op::CtrlLoop>().count);
      const size_t close = loops.EndOf(i);
      if (count > 0) {
        auto [body, body_trips] = CountRange(insts, loops, i + 1, close, halted);
        n += count * (body + 1);  // the body and its ctrl.endloop, every trip
        trips += count * (body_trips + 1);
      }
      i = close;
    }
  }
  return {n, trips};
}

// Feeds SimOptions::progress: the sequencers' retired instructions and loop trips, at most every
// progress_interval_seconds of wall clock, then once at the end.
class ProgressProbe {
 public:
  ProgressProbe(const SimOptions& options, const isa::Program& program, System& system)
      : options_(options), system_(system), started_(std::chrono::steady_clock::now()) {
    if (!options_.progress) return;
    for (const isa::CoreProgram& core : program.cores) {
      auto [instructions, trips] = DynamicCounts(core);
      progress_.instructions_total += instructions;
      progress_.loop_trips_total += trips;
    }
    next_ = started_ + Interval();
  }

  void Attach(Engine& engine) {
    if (!options_.progress) return;
    engine.set_observer([this](Cycles now) {
      const auto t = std::chrono::steady_clock::now();
      if (t < next_) return;
      next_ = t + Interval();
      Report(now);
    });
  }

  void Done(Cycles end) {
    if (!options_.progress) return;
    progress_.done = true;
    Report(end);
  }

 private:
  std::chrono::steady_clock::duration Interval() const {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::max(0.0, options_.progress_interval_seconds)));
  }

  void Report(Cycles now) {
    progress_.cycle = now;
    progress_.instructions_retired = progress_.loop_trips = 0;
    for (auto& core : system_.cores()) {
      progress_.instructions_retired += core->sequencer().retired();
      progress_.loop_trips += core->sequencer().loop_trips();
    }
    progress_.elapsed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    options_.progress(progress_);
  }

  const SimOptions& options_;
  System& system_;
  std::chrono::steady_clock::time_point started_, next_;
  SimProgress progress_;
};

// Loop structure, as the interpreter's Load checks it (isa::LoopStructure): every ctrl.loop closed
// by a ctrl.endloop.
Status CheckLoopNesting(const isa::Program& program) {
  for (int c = 0; c < program.num_cores(); ++c) {
    const auto& insts = program.cores[c].instructions;
    const isa::LoopStructure loops(insts);
    if (loops.status().ok()) continue;
    const size_t i = loops.error_index();
    return InvalidArgument(fmt::format("core {} instruction {} {}: {}", c, i,
                                       isa::Mnemonic(insts[i].opcode), loops.status().message()));
  }
  return OkStatus();
}

// Ends the run `max_seconds` of wall time from now (0: no limit; a limit too large for the clock's
// range: no limit). InvalidArgument if negative or NaN.
Status SetDeadline(double max_seconds, Engine& engine) {
  if (max_seconds < 0 || std::isnan(max_seconds)) {
    return InvalidArgument(
        fmt::format("--max-seconds: expected a non-negative number, got {}", max_seconds));
  }
  if (max_seconds > 0) {
    // The deadline counts from this call (Run makes it after the setup, which the program's size
    // bounds).
    const auto now = std::chrono::steady_clock::now();
    const std::chrono::duration<double> limit(max_seconds);
    if (limit < std::chrono::steady_clock::time_point::max() - now) {
      engine.set_deadline(
          now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(limit),
          max_seconds);
    }
  }
  return OkStatus();
}

// The MXU models' accumulators (moved: the system ends with the run) and the sequencers' flags
// into the final architectural state.
void MoveAccumulatorsAndFlags(System& system, isa::MachineState& state) {
  for (size_t c = 0; c < system.cores().size(); ++c) {
    auto& core = system.cores()[c];
    isa::CoreState& arch = state.cores[c];
    for (size_t mi = 0; mi < core->mxus().size() && mi < arch.mxus.size(); ++mi) {
      MxuAccumulators a = core->mxus()[mi]->TakeAccumulators();
      if (a.empty()) continue;  // never written (timing-only): the state's zeros stay implicit
      arch.mxus[mi].acc = std::move(a);  // the written pages only
    }
    arch.flags = core->sequencer().flags();
  }
}

// The paths of the ICI links, the host links and the HBMs of the chips used (`n` cores).
void RecordResourcePaths(const System& system, const config::ChipConfig& config, int chips_used,
                         int n, SimResult& r) {
  const Interconnect& ic = system.interconnect();
  const TransferNetwork& net = system.network();
  for (int link : ic.links()) r.ici_links.push_back(net.resource_path(link));
  for (int c = 0; c < chips_used; ++c) {
    r.host_paths.push_back(net.resource_path(ic.host(c)));
    if (config.hbm.shared_by_cores) {
      r.hbm_paths.push_back(net.resource_path(ic.hbm(c, 0)));
    } else {
      for (int k = 0; k < config.tensorcores && c * config.tensorcores + k < n; ++k) {
        r.hbm_paths.push_back(net.resource_path(ic.hbm(c, k)));
      }
    }
  }
}

}  // namespace

std::pair<uint64_t, uint64_t> DynamicCounts(const isa::CoreProgram& core) {
  const isa::LoopStructure loops(core.instructions);
  if (!loops.status().ok()) return {0, 0};  // Run refuses such code before it counts
  bool halted = false;
  return CountRange(core.instructions, loops, 0, core.instructions.size(), halted);
}

StatusOr<SimResult> Simulator::Run(const isa::Program& program,
                                   std::vector<isa::DataSegment> initial) const {
  TPUSIM_RETURN_IF_ERROR(isa::CheckProgramStructure(program));
  // A config built in code has not been through the loader: the schema's ranges and the checks
  // between keys, once, naming the key path (every unit below takes the config as valid).
  const std::string origin =
      config_.source_path.empty() ? "config '" + config_.name + "'" : config_.source_path;
  TPUSIM_RETURN_IF_ERROR(config::ValidateChipConfig(config_, origin));
  const isa::MemorySizes sizes = isa::MemorySizes::FromChipConfig(config_);
  TPUSIM_ASSIGN_OR_RETURN(isa::MachineState state,
                          isa::MachineState::Create(sizes, program.num_cores()));
  TPUSIM_RETURN_IF_ERROR(state.WriteSegments(program.data, "data segment"));
  TPUSIM_RETURN_IF_ERROR(state.WriteSegments(initial, "initial segment"));
  std::vector<isa::DataSegment>().swap(initial);  // now in the memories: not held twice
  TPUSIM_RETURN_IF_ERROR(CheckLoopNesting(program));

  System::Options sys_options;
  sys_options.mxu_model = options_.mxu_model;
  sys_options.instruction_profile = options_.instruction_profile;
  std::unique_ptr<TraceCollector> collector;
  TraceSink* trace = options_.trace_sink;
  if (trace == nullptr && options_.trace) {
    collector = std::make_unique<TraceCollector>(options_.trace_max_events);
    trace = collector.get();
  }
  sys_options.trace = trace;
  TPUSIM_ASSIGN_OR_RETURN(
      std::unique_ptr<System> system,
      System::Create(config_, program, options_.compute_values ? &state : nullptr, sys_options));
  Engine engine(options_.step_order, options_.step_seed, options_.step_every_unit);
  TPUSIM_RETURN_IF_ERROR(SetDeadline(options_.max_seconds, engine));
  system->AddTo(engine);
  if (trace != nullptr) {
    std::vector<std::string> resources;
    for (int i = 0; i < system->network().resource_count(); ++i) {
      resources.push_back(system->network().resource_path(i));
    }
    trace->Begin(system->trace_tracks(), program, config_.clock_hz, resources);
  }
  ProgressProbe probe(options_, program, *system);
  probe.Attach(engine);
  // The stall attribution is computed while the run lasts, so its memory is bounded by what a
  // flush interval retires, not by the instructions executed.
  uint64_t steps = 0;
  std::unique_ptr<FastForward> fast_forward;
  if (options_.fast_forward && !options_.compute_values && trace == nullptr &&
      options_.mxu_model == MxuModelKind::kFast) {
    fast_forward = std::make_unique<FastForward>(*system, &engine);
  }
  TPUSIM_RETURN_IF_ERROR(CheckWorkBeforeRun(program, config_, options_, fast_forward != nullptr));
  if (options_.max_work > 0) {
    // One list per copy of the code (replicas share theirs: isa::CoreList), not per core.
    std::map<const isa::CoreProgram*, std::shared_ptr<const std::vector<uint64_t>>> costs;
    for (size_t c = 0; c < system->cores().size() && c < program.cores.size(); ++c) {
      auto& list = costs[&program.cores[c]];
      if (list == nullptr) {
        list = std::make_shared<const std::vector<uint64_t>>(
            SimulatorWorkCosts(program.cores[c], config_, options_));
      }
      system->cores()[c]->sequencer().set_work_costs(list);
    }
  }
  engine.set_after_step([&](Cycles now) -> Cycles {
    if (++steps % kAttributionFlushInterval == 0) {
      for (auto& core : system->cores()) core->FlushAttribution();
    }
    if (options_.max_work > 0 && steps % kWorkCheckInterval == 0) {
      uint64_t work = 0;
      for (auto& core : system->cores()) work = SaturatingAdd(work, core->sequencer().work());
      if (work > options_.max_work) {
        system->errors().Report(now, -1, WorkBudgetExhausted(work, options_.max_work, now.value()));
      }
    }
    return fast_forward ? fast_forward->AfterStep(now) : Cycles(0);
  });
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
  if (fast_forward) {
    r.fast_forward_trips = fast_forward->trips_skipped();
    r.fast_forward_cycles = fast_forward->cycles_skipped().value();
  }
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
  probe.Done(last);
  if (trace != nullptr) trace->End(last.value());
  MoveAccumulatorsAndFlags(*system, state);
  RecordResourcePaths(*system, config_, chips_used, n, r);
  r.hlo_names = program.hlo_names;
  r.stats = system->stats();
  r.trace_tracks = std::move(system->trace_tracks());
  if (collector) {
    r.trace_events = std::move(collector->events());
    r.trace_truncated = collector->truncated();
  }
  r.final_state = std::move(state);
  return r;
}

}  // namespace tpusim::sim
