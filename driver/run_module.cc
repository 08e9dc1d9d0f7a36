#include "driver/run_module.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/heap.h"
#include "compiler/device_literal.h"
#include "compiler/passes/spmd_check.h"
#include "compiler/passes/dynamic_padder.h"
#include "compiler/passes/spmd_manual.h"
#include "driver/device_slice.h"
#include "driver/host_cpu.h"
#include "driver/limits.h"
#include "driver/logging.h"
#include "driver/partition_check.h"
#include "hlo/eval/evaluator.h"
#include "hlo/eval/literal.h"
#include "hlo/eval/literal_compare.h"
#include "hlo/eval/while_trips.h"
#include "hlo/while_loop.h"
#include "isa/program_traffic.h"
#include "sim/work_budget.h"

namespace tpusim::driver {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;

// The most trips of one while a timing-only run counts on the evaluator: 2^16, an assumption that
// bounds the host time counting may take in a run that asked for no values (2^20 trips of a 2-op
// body took 2.5 s of CPU on the development machine, tests/data/hostile/while_s32_wraps.hlo; the
// fuzz_pipeline harness's 10 s watchdog fired on it under load). Longer data-dependent loops in
// timing-only runs need --trip-count.
constexpr int64_t kTimingOnlyCountedTrips = int64_t{1} << 16;

// Whether the run computes values: r.timing_only and its reason, from --timing-only and what the
// compiled module needs (a custom-call with a given cost, a --trip-count, values too large for
// --max-check-bytes, too much DMA traffic for --max-check-traffic, or more work with values than
// --max-instructions).
void ChooseTimingOnly(const hlo::HloModule& module, const RunOptions& options,
                      RunModuleResult& r) {
  r.timing_only = options.timing_only;
  if (!r.timing_only && !r.compiled.estimated_custom_calls.empty()) {
    r.timing_only = true;
    r.timing_only_reason = fmt::format(
        "%{} is a custom-call with a user-given cost (--custom-call-cost) and no known semantics, "
        "so no values are computed: ran timing-only",
        r.compiled.estimated_custom_calls.front());
  }
  if (!r.timing_only && !r.compiled.cost_estimated_kernels.empty()) {
    r.timing_only = true;
    r.timing_only_reason = fmt::format(
        "%{} is a Pallas TPU kernel (tpu_custom_call) timed from its cost; its Mosaic body is not "
        "run, so no values are computed: ran timing-only",
        r.compiled.cost_estimated_kernels.front().name);
  }
  if (!r.timing_only && !options.trip_counts.empty() && !r.compiled.given_trip_counts.empty()) {
    for (const std::string& given : r.compiled.given_trip_counts) {
      if (options.trip_counts.count(given.substr(0, given.rfind('='))) == 0) continue;
      r.timing_only = true;
      r.timing_only_reason = fmt::format(
          "while %{} trips were given by --trip-count (its count depends on data), so the run "
          "times that many trips instead of the count the values would give: ran timing-only",
          given);
      break;
    }
  }
  const int64_t check_bytes = hlo::EstimateCheckBytes(module, r.replicas);
  if (!r.timing_only && check_bytes > options.max_check_bytes) {  // values too big to check
    r.timing_only = true;
    r.timing_only_reason = fmt::format(
        "the values need about {} bytes, more than --max-check-bytes {}: ran timing-only",
        check_bytes, options.max_check_bytes);
  }
  const double traffic = isa::ProgramDmaBytes(r.compiled.program);
  if (!r.timing_only && traffic > static_cast<double>(options.max_check_traffic)) {
    r.timing_only = true;
    r.timing_only_reason = fmt::format(
        "computing the values means moving {:.3g} bytes between HBM and VMEM (every core, every "
        "loop trip), more than --max-check-traffic {}: ran timing-only",
        traffic, options.max_check_traffic);
  }
  // Values multiply the simulator's work (every element of every vector op and DMA): a module
  // whose timing fits the work budget but whose values do not is timed without them, as above,
  // rather than refused.
  if (!r.timing_only && options.sim.max_work > 0) {
    sim::SimOptions with_values = options.sim;
    with_values.compute_values = true;
    const uint64_t work = sim::LeastWorkUnits(r.compiled.program, r.config, with_values);
    if (work > options.sim.max_work) {
      r.timing_only = true;
      r.timing_only_reason = fmt::format(
          "computing the values does at least {} units of work, more than --max-instructions {}: "
          "ran timing-only (raise --max-instructions to check the values)",
          work, options.sim.max_work);
    }
  }
}

// The run's inputs: per core the same deterministic arguments the evaluator gets, and the HBM
// segments that put them where the compiler placed the parameters.
struct RunInputs {
  std::vector<std::vector<Literal>> full_args;  // per replica, full size (SPMD only)
  std::vector<std::vector<Literal>> args;       // per core
  std::vector<isa::DataSegment> segments;
};

// A module tpusim's SPMD partitioner split (r.compiled.spmd): replica q's full-size arguments are
// made once, and core d = q * partitions + p gets partition p's shard of them
// (compiler/passes/spmd_check.h). The arguments are a function of (module, --seed, device) only,
// so the simulation's HBM image and the check's evaluator get equal ones from separate calls;
// `segments` false leaves in.segments empty.
StatusOr<RunInputs> MakeInputs(const hlo::HloModule& module, const RunOptions& options,
                               const RunModuleResult& r, bool segments) {
  const std::optional<compiler::SpmdSignature>& spmd = r.compiled.spmd;
  const int64_t partitions = r.partitions;
  const int64_t eval_replicas = std::max<int64_t>(1, r.replicas / partitions);
  RunInputs in;
  std::vector<std::vector<Literal>>& full_args = in.full_args;
  std::vector<std::vector<Literal>>& args = in.args;
  if (spmd) {
    for (int64_t q = 0; q < eval_replicas; ++q) {
      TPUSIM_ASSIGN_OR_RETURN(auto a, hlo::Evaluator::MakeRandomArguments(
                                          module, options.seed, q, options.max_check_bytes));
      full_args.push_back(std::move(a));
    }
  }
  for (int64_t d = 0; d < r.replicas; ++d) {
    if (spmd) {
      TPUSIM_ASSIGN_OR_RETURN(
          auto a, compiler::ShardArguments(
                      *spmd, full_args.at(static_cast<size_t>(d / partitions)), d % partitions));
      args.push_back(std::move(a));
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(auto a, hlo::Evaluator::MakeRandomArguments(module, options.seed, d,
                                                                        options.max_check_bytes));
    args.push_back(std::move(a));
  }
  if (!segments) return in;
  for (const compiler::BufferPlacement& p : r.compiled.parameters) {
    const Literal* lit =
        &args.at(static_cast<size_t>(p.core)).at(static_cast<size_t>(p.parameter_number));
    for (int64_t i : p.tuple_index) lit = &lit->element(i);
    isa::DataSegment seg;
    seg.space = isa::MemSpace::kHbm;
    seg.core = p.core;
    seg.address = p.hbm_address;
    seg.bytes = compiler::DeviceBytes(*lit);
    in.segments.push_back(std::move(seg));
  }
  return in;
}

// The reference output of every core: the evaluator with the TPU's numerics (`tpu`: DEFAULT-
// precision dots with bf16 operands, summed in the MXU's order) or in full precision. A module
// tpusim's SPMD partitioner split is evaluated unpartitioned, each core's reference its shard,
// unless `as_partitioned`: then `module` is the partitioned program (CompiledModule::partitioned,
// driver/partition_check.h), evaluated on every device with the sharded arguments.
StatusOr<std::vector<Literal>> EvaluateReference(const hlo::HloModule& module,
                                                 const RunOptions& options,
                                                 const RunModuleResult& r, const RunInputs& in,
                                                 bool tpu, bool as_partitioned = false) {
  if (compiler::HasDynamicShapes(module)) {  // the module the device ran: padded
    TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> padded, PadDynamicShapes(module));
    return EvaluateReference(*padded, options, r, in, tpu, as_partitioned);
  }
  const std::optional<compiler::SpmdSignature>& spmd = r.compiled.spmd;
  const int64_t partitions = r.partitions;
  const int64_t eval_replicas = std::max<int64_t>(1, r.replicas / partitions);
  SetPhase("evaluate");
  hlo::EvaluatorOptions eo;
  eo.seed = options.seed;
  eo.max_bytes = options.max_check_bytes;
  eo.tpu_default_precision = tpu;
  // TPU semantics also sum each dot in the MXU's order: K in tiles of mxu.rows rows.
  if (tpu) eo.mxu_rows = r.config.core.mxu.rows;
  CheckProgress progress{tpu ? 1 : 2, 0, 0, 0, false};
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (options.check_progress) {
    const hlo::HloComputation* entry = module.entry_computation();
    for (const auto& inst : entry->instructions()) {
      progress.instructions_total += inst->opcode() != hlo::HloOpcode::kParameter;
    }
    eo.on_instruction = [&, entry](const hlo::HloInstruction& inst, double) {
      if (inst.parent() != entry) return;
      ++progress.instructions_done;
      progress.elapsed_seconds = elapsed();
      options.check_progress(progress);
    };
  }
  hlo::Evaluator ev(eo);
  std::vector<Literal> out;
  if (spmd && as_partitioned) {
    // The partitioned program `module` is (driver/partition_check.h), on every device.
    TPUSIM_ASSIGN_OR_RETURN(out, ev.EvaluateReplicated(module, eval_replicas, partitions, in.args));
  } else if (spmd && compiler::spmd::HasManualSharding(module)) {
    // A manual region is written per device and has no one-device meaning: the reference is the
    // program every partition runs as the SPMD partitioner wrote it (spmd_manual.h), evaluated on
    // all devices in lockstep with the same shards of the arguments.
    TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> partitioned,
                            PartitionManualRegions(module));
    TPUSIM_ASSIGN_OR_RETURN(
        out, ev.EvaluateReplicated(*partitioned, eval_replicas, partitions, in.args));
  } else if (spmd) {
    // The unpartitioned module on one device per replica; each core's reference is its shard.
    TPUSIM_ASSIGN_OR_RETURN(auto full,
                            ev.EvaluateReplicated(module, eval_replicas, 1, in.full_args));
    for (int64_t d = 0; d < r.replicas; ++d) {
      TPUSIM_ASSIGN_OR_RETURN(
          auto shard, compiler::ExpectedPartitionOutput(
                          *spmd, full.at(static_cast<size_t>(d / partitions)), d % partitions));
      out.push_back(std::move(shard));
    }
  } else {
    TPUSIM_ASSIGN_OR_RETURN(out, ev.EvaluateReplicated(module, eval_replicas, partitions, in.args));
  }
  if (options.check_progress) {
    progress.done = true;
    progress.elapsed_seconds = elapsed();
    options.check_progress(progress);
  }
  return out;
}

// Every output leaf of every core, read from the simulated HBM in r.compiled.outputs' order.
StatusOr<std::vector<Literal>> ReadOutputs(RunModuleResult& r) {
  std::vector<Literal> got;
  for (const compiler::BufferPlacement& p : r.compiled.outputs) {
    std::string bytes(static_cast<size_t>(p.bytes), '\0');
    TPUSIM_RETURN_IF_ERROR(r.sim.final_state.memory(isa::MemSpace::kHbm, p.core)
                               .Read(p.hbm_address, bytes.data(), bytes.size()));
    TPUSIM_ASSIGN_OR_RETURN(Literal leaf, compiler::LiteralFromDevice(p.shape, bytes));
    got.push_back(std::move(leaf));
  }
  return got;
}

// Compares the simulated output leaves `got` (ReadOutputs) with the reference `want` (one tuple or
// array per core), element by element into `stats`.
Status CompareOutputs(const RunModuleResult& r, const RunOptions& options,
                      const std::vector<Literal>& got, const std::vector<Literal>& want,
                      hlo::LiteralErrorStats& stats) {
  std::map<int32_t, int64_t> leaf_of_core;
  for (size_t i = 0; i < got.size(); ++i) {
    const compiler::BufferPlacement& p = r.compiled.outputs[i];
    const int64_t leaf = leaf_of_core[p.core]++;
    auto ref_leaves = want.at(static_cast<size_t>(p.core)).Leaves();
    if (leaf >= static_cast<int64_t>(ref_leaves.size())) {
      return Internal(fmt::format("output {} has no reference leaf", p.name));
    }
    const std::string what = fmt::format("replica {} output {} ({})", p.core, leaf, p.name);
    TPUSIM_RETURN_IF_ERROR(hlo::CompareLiterals(got[i], *ref_leaves[static_cast<size_t>(leaf)],
                                                options.atol, options.rtol, what, stats));
  }
  return OkStatus();
}

// For a module tpusim's SPMD partitioner split whose simulated values differ from its unpartitioned
// reference: questions 1 and 2 of driver/partition_check.h. Returns whether both hold, and the
// note that says what was found.
StatusOr<std::pair<bool, std::string>> CheckPartitionedProgram(const hlo::HloModule& module,
                                                               const RunOptions& options,
                                                               const RunModuleResult& r,
                                                               const RunInputs& in,
                                                               const std::vector<Literal>& got) {
  if (!r.compiled.partitioned) return Internal("the partitioned program was not kept");
  const hlo::HloModule& program_module = *r.compiled.partitioned;
  hlo::LiteralErrorStats program;
  {
    TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> want,
                            EvaluateReference(program_module, options, r, in, /*tpu=*/true,
                                              /*as_partitioned=*/true));
    TPUSIM_RETURN_IF_ERROR(CompareOutputs(r, options, got, want, program));
  }
  if (program.mismatches > 0) {
    return std::pair{false, fmt::format("the simulated values differ from the partitioned "
                                        "program's on the evaluator too: {} element(s); {}",
                                        program.mismatches, program.first_mismatch)};
  }
  const std::string same = fmt::format(
      "the simulated values equal the partitioned program's on the evaluator (max abs error "
      "{:.3g})",
      program.max_abs);
  StatusOr<std::unique_ptr<hlo::HloModule>> wide = WidenFloatsToF64(module);
  StatusOr<std::unique_ptr<hlo::HloModule>> wide_program = WidenFloatsToF64(program_module);
  for (const auto* w : {&wide, &wide_program}) {
    if (!w->ok()) return std::pair{false, same + "; " + std::string(w->status().message())};
  }
  RunInputs wide_in;
  TPUSIM_ASSIGN_OR_RETURN(wide_in.full_args, WidenArgumentsToF64(in.full_args));
  TPUSIM_ASSIGN_OR_RETURN(wide_in.args, WidenArgumentsToF64(in.args));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> partitioned,
                          EvaluateReference(**wide_program, options, r, wide_in, /*tpu=*/false,
                                            /*as_partitioned=*/true));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> unpartitioned,
                          EvaluateReference(**wide, options, r, wide_in, /*tpu=*/false));
  hlo::LiteralErrorStats f64;
  for (size_t d = 0; d < partitioned.size(); ++d) {
    const auto a = partitioned[d].Leaves(), b = unpartitioned.at(d).Leaves();
    if (a.size() != b.size()) return Internal("the partitioned program's outputs differ in count");
    for (size_t k = 0; k < a.size(); ++k) {
      TPUSIM_RETURN_IF_ERROR(hlo::CompareLiterals(
          *a[k], *b[k], options.atol, options.rtol,
          fmt::format("(the partitioned program in f64 as 'simulated') device {} output {}", d, k),
          f64));
    }
  }
  if (f64.mismatches > 0) {
    return std::pair{false, fmt::format("{}, but the partitioned program differs from the "
                                        "unpartitioned module in f64: {} element(s); {}",
                                        same, f64.mismatches, f64.first_mismatch)};
  }
  return std::pair{true, fmt::format(
      "{}, and the partitioned program equals the unpartitioned module with every float widened "
      "to f64 (max abs difference {:.3g}, max rel {:.3g}): the difference is the order of the "
      "sums over shards and what rounding makes of it (driver/partition_check.h)",
      same, f64.max_abs, f64.max_rel)};
}

// The check (r.check): reads the outputs from the simulated HBM and releases the simulated
// memories, then evaluates the module twice on the same inputs as the simulation — with the TPU's
// numerics (checked), then in full f32 (reported) — comparing each reference as soon as it is made
// and releasing it before the next. So at most one reference and one copy of the inputs are held,
// never beside the simulated machine state: the run's peak memory is the larger of the
// simulation's and one evaluation's (benchmarks/functional.sh). An SPMD module whose values differ
// from the unpartitioned module's is evaluated three times more, one reference at a time
// (CheckPartitionedProgram); its f64 inputs and references are twice the size.
Status CheckOutputs(const hlo::HloModule& module, const RunOptions& options, RunModuleResult& r) {
  // The cores' memories (VMEM, SMEM, MXU state) go first, the HBM the outputs are in after them.
  r.sim.final_state.cores.clear();
  r.sim.final_state.cores.shrink_to_fit();
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> got, ReadOutputs(r));
  r.sim.final_state = isa::MachineState();
  ReleaseFreeHeap();  // the simulated memories freed above: RSS back to what is live
  TPUSIM_ASSIGN_OR_RETURN(const RunInputs in, MakeInputs(module, options, r, /*segments=*/false));
  hlo::LiteralErrorStats checked, vs_f32;
  {
    TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> want,
                            EvaluateReference(module, options, r, in, /*tpu=*/true));
    TPUSIM_RETURN_IF_ERROR(CompareOutputs(r, options, got, want, checked));
  }
  {
    TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> want_f32,
                            EvaluateReference(module, options, r, in, /*tpu=*/false));
    TPUSIM_RETURN_IF_ERROR(CompareOutputs(r, options, got, want_f32, vs_f32));
  }
  CheckResult& c = r.check;
  for (const Literal& leaf : got) c.elements_compared += leaf.element_count();
  c.performed = true;
  c.passed = checked.mismatches == 0;
  if (!c.passed && r.compiled.partitioned) {  // kept for auto-partitioned modules only
    TPUSIM_ASSIGN_OR_RETURN(auto verdict, CheckPartitionedProgram(module, options, r, in, got));
    c.passed = verdict.first;
    c.partition_note = std::move(verdict.second);
    c.unpartitioned_mismatches = checked.mismatches;
  }
  c.max_abs_error = checked.max_abs;
  c.max_rel_error = checked.max_rel;
  c.max_abs_error_vs_f32 = vs_f32.max_abs;
  c.max_rel_error_vs_f32 = vs_f32.max_rel;
  c.largest_abs_value_f32 = vs_f32.max_ref;
  c.elements_outside_tolerance_vs_f32 = vs_f32.mismatches;
  c.elements_non_finite = checked.non_finite;
  c.elements_non_finite_vs_f32 = vs_f32.non_finite;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      const hlo::HloOpcode op = inst->opcode();
      if (op == hlo::HloOpcode::kDot || op == hlo::HloOpcode::kRaggedDot ||
          op == hlo::HloOpcode::kConvolution) {
        ++c.dot_layers;
      }
    }
  }
  if (!c.passed) {
    c.reason = fmt::format("{} element(s) outside tolerance; first: {}", checked.mismatches,
                           checked.first_mismatch);
  }
  return OkStatus();
}

// A timing-only run times one trip count per loop (ctrl.break_unless's `trips`): a while the
// evaluator saw run different counts in different executions (a rejection loop nested in another
// data-dependent loop, as jax.random.gamma's under vmap) cannot be timed without its values. The
// first such while, in `whiles` order, as a located error saying what to do.
Status RefuseVaryingLoop(const hlo::HloModule& module, const std::vector<std::string>& whiles,
                         const std::map<std::string, int64_t>& varying) {
  for (const std::string& name : whiles) {
    auto it = varying.find(name);
    if (it == varying.end()) continue;
    for (const auto& comp : module.computations()) {
      const hlo::HloInstruction* w = comp->FindInstruction(name);
      if (w == nullptr) continue;
      return Unimplemented(FormatDiagnostic(
          module.source_name(), "", w->location(),
          fmt::format("%{} ({}): cannot time without values: its trip count depends on data and "
                      "differs between its executions (the CPU evaluator counted up to {} trips), "
                      "while a timing-only run assumes one count per loop. Run without "
                      "--timing-only (the device then evaluates the condition every trip), or "
                      "give one count for every execution: --trip-count {}=N",
                      name, hlo::HloOpcodeString(w->opcode()), it->second, name)));
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<RunModuleResult> RunModule(const hlo::HloModule& module, const config::ChipConfig& config,
                                    const RunOptions& options) {
  RunModuleResult r;
  TPUSIM_ASSIGN_OR_RETURN(DeviceSlice slice, SliceForModule(module, config, options.replicas));
  const int64_t cores = slice.devices;
  r.config = std::move(slice.config);
  r.slice_note = std::move(slice.note);
  compiler::CompileOptions copts;
  copts.num_replicas = options.replicas;  // 0: the compiler counts them as SliceForModule did
  copts.timing_only = options.timing_only;
  // Only a check may use it (CheckPartitionedProgram), and not for a manual region, whose
  // reference is the partitioned program anyway.
  copts.keep_partitioned =
      !options.timing_only && options.check && !compiler::spmd::HasManualSharding(module);
  copts.dump_after = options.dump_after;
  copts.megacore = options.megacore;
  copts.max_unrolled_instructions = options.max_unrolled_instructions;
  copts.custom_call_cycles = options.custom_call_cycles;
  copts.trip_counts = options.trip_counts;
  SetPhase("evaluate");
  // A timing-only run only counts: at most kTimingOnlyCountedTrips trips of any while, and a
  // module the evaluator cannot finish is left to --trip-count (the compiler's refusal says why).
  hlo::WhileTripOptions trip_options;
  trip_options.seed = options.seed;
  trip_options.max_bytes = options.max_check_bytes;
  if (options.timing_only) trip_options.max_trips = kTimingOnlyCountedTrips;
  trip_options.lenient = options.timing_only;
  trip_options.varying_as_most = !options.timing_only;
  std::map<std::string, int64_t>& varying = r.varying_trip_counts;
  trip_options.varying = &varying;
  const std::vector<std::string> data_dependent =
      hlo::DataDependentWhiles(module, options.trip_counts);
  std::vector<std::string> never_ran;
  trip_options.never_ran = &never_ran;
  TPUSIM_ASSIGN_OR_RETURN(r.counted_trip_counts,
                          hlo::CountWhileTrips(module, cores, data_dependent, trip_options));
  // A loop these inputs never run (in an if-converted branch they do not take) runs 0 trips: the
  // device computes the branch but the TPU would not, and the select drops its values.
  for (const std::string& w : never_ran) r.counted_trip_counts[w] = 0;
  if (options.timing_only) {
    TPUSIM_RETURN_IF_ERROR(RefuseVaryingLoop(module, data_dependent, varying));
  }
  // Counted loops run as real control flow (a branch on their condition every trip); the count
  // is what a timing-only simulation assumes.
  copts.branch_trip_counts = r.counted_trip_counts;
  SetPhase("compile");
  TPUSIM_ASSIGN_OR_RETURN(r.compiled, compiler::Compile(module, r.config, copts));
  LogCompiled(r.compiled);
  r.replicas = r.compiled.devices;
  // SPMD-partitioned dumps: each core is one (replica, partition) pair for the evaluator.
  r.partitions = slice.partitions;
  ChooseTimingOnly(module, options, r);

  r.hlo_opcodes = r.compiled.hlo_opcodes;  // per HLO tag, for the per-op report
  r.hlo_compiler_inserted = r.compiled.hlo_compiler_inserted;

  // The simulation's initial memories: the program's data segments (constants), then the inputs —
  // the same deterministic arguments the evaluator gets, written where the compiler put them. The
  // simulator releases each list once written, so nothing is held twice beside the simulated
  // memories: the data segments move out of the program, and the arguments themselves are made
  // again by the check after the simulation (CheckOutputs).
  std::vector<isa::DataSegment> inputs = std::move(r.compiled.program.data);
  r.compiled.program.data.clear();
  if (!r.timing_only) {
    TPUSIM_ASSIGN_OR_RETURN(RunInputs in, MakeInputs(module, options, r, /*segments=*/true));
    inputs.insert(inputs.end(), std::make_move_iterator(in.segments.begin()),
                  std::make_move_iterator(in.segments.end()));
  }

  sim::SimOptions sopts = options.sim;
  sopts.compute_values = !r.timing_only;
  SetPhase("simulate");
  spdlog::info("simulating {} core(s) of '{}'{}", r.compiled.program.cores.size(), r.config.name,
               r.timing_only ? " (timing only)" : "");
  TPUSIM_ASSIGN_OR_RETURN(
      r.sim, sim::Simulator(r.config, sopts).Run(r.compiled.program, std::move(inputs)));
  spdlog::info("simulated {} cycles, {} instructions", r.sim.cycles.value(),
               r.sim.instructions_executed);

  CheckResult& c = r.check;
  c.atol = options.atol;
  c.rtol = options.rtol;
  if (r.timing_only) {
    c.reason = r.timing_only_reason.empty() ? "--timing-only" : r.timing_only_reason;
    return r;
  }
  if (!options.check) {
    c.reason = "--no-check";
    return r;
  }
  spdlog::info("checking every output against the CPU evaluator (TPU DEFAULT precision, then f32)");
  TPUSIM_RETURN_IF_ERROR(CheckOutputs(module, options, r));
  return r;
}

}  // namespace tpusim::driver
