#include "driver/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/passes/spmd_manual.h"
#include "driver/host_cpu.h"
#include "hlo/cost_analysis.h"
#include "hlo/verify_devices.h"
#include "sim/report/op_bound.h"
#include "sim/report/report.h"

namespace tpusim::driver {
namespace {

TpuRow RowFromRun(const RunModuleResult& run, const std::string& label) {
  TpuRow row;
  row.label = label;
  row.cores = run.compiled.program.num_cores();
  row.cycles = run.sim.cycles.value();
  row.clock_hz = run.sim.clock_hz;
  row.seconds_per_step = run.sim.seconds();
  row.mxu_utilization = sim::MxuUtilization(run.sim);
  return row;
}

// "12.3 ms", "41.2 us", "0 s".
std::string Sec(double s) {
  if (s <= 0) return "-";
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}

// "6.03 M", "94.1 k", "0".
std::string Count(double v) {
  if (v < 0) return "-";
  if (v >= 1e12) return fmt::format("{:.3g} T", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.3g} G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.3g} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.3g} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// "37.5%", "0.26%".
std::string Pct(double fraction) {
  const double p = 100 * fraction;
  return p >= 1 || p == 0 ? fmt::format("{:.1f}%", p) : fmt::format("{:.2g}%", p);
}

// "3.2x", "268x", "2950x".
std::string Times(double ratio) {
  return ratio >= 1000 ? fmt::format("{:.0f}x", ratio) : fmt::format("{:.3g}x", ratio);
}

std::string Ratio(double cpu, double tpu) {
  if (cpu <= 0 || tpu <= 0) return "-";
  return Times(cpu / tpu);
}

Status CheckCompareOptions(const CompareOptions& options) {
  if (options.repeat < 1) {
    return InvalidArgument(fmt::format("--repeat must be >= 1, got {}", options.repeat));
  }
  if (options.threads < 0) {
    return InvalidArgument(fmt::format("--threads must be >= 0, got {}", options.threads));
  }
  if (options.replicas < 0) {
    return InvalidArgument(fmt::format(
        "--replicas must be >= 1 (or 0: the module's device count), got {}", options.replicas));
  }
  return OkStatus();
}

// The median over the CPU runs of the time outside the entry instructions (seconds).
double MedianOutsideOpsSeconds(const hlo::CpuRunResult& cpu) {
  std::vector<double> outside;
  for (size_t i = 0; i < cpu.run_seconds.size() && i < cpu.run_entry_seconds.size(); ++i) {
    outside.push_back(std::max(0.0, cpu.run_seconds[i] - cpu.run_entry_seconds[i]));
  }
  std::sort(outside.begin(), outside.end());
  const size_t n = outside.size();
  if (n == 0) return 0;
  return n % 2 ? outside[n / 2] : 0.5 * (outside[n / 2 - 1] + outside[n / 2]);
}

// The 1-core row: the all-cores run itself for a single-core device; a run without megacore for
// a megacore device; for N replicas, one replica on one core counted N times (an estimate); none
// for a partitioned module (its partitions are one program's parts, not copies).
StatusOr<TpuRow> OneCoreRow(const hlo::HloModule& module, const config::ChipConfig& config,
                            const RunOptions& all, const RunModuleResult& run_all,
                            const CompareResult& r) {
  const int64_t replicas = r.replicas;
  TpuRow one;
  if (r.partitions > 1) {
    one.label = "1 core";
    one.note = fmt::format(
        "not simulated: the module is partitioned (SPMD, {} partitions): each core runs a part of "
        "one program, which one core alone does not run",
        r.partitions);
  } else if (replicas == 1 && run_all.compiled.cores_per_device == 1) {
    one = RowFromRun(run_all, "1 core");
  } else if (replicas == 1) {
    // Megacore ran the device on all of its chip's cores: the 1-core row is a run without it.
    RunOptions single = all;
    single.megacore = false;
    single.check = false;
    TPUSIM_ASSIGN_OR_RETURN(RunModuleResult run_one, RunModule(module, config, single));
    one = RowFromRun(run_one, "1 core");
  } else {
    RunOptions single = all;
    single.replicas = 1;
    single.megacore = false;
    single.check = false;
    StatusOr<RunModuleResult> run_one = RunModule(module, config, single);
    if (run_one.ok()) {
      one = RowFromRun(*run_one, "1 core");
      one.sequential_runs = replicas;
      one.seconds_per_step *= static_cast<double>(replicas);
      one.note = fmt::format(
          "estimate: one replica simulated on one core (collectives over a group of one), x {} "
          "replicas run one after another; the gradient sum that replaces the all-reduce is "
          "not counted",
          replicas);
    } else {
      one.label = "1 core";
      one.note =
          "not simulated: one replica does not compile or run: " + run_one.status().message();
    }
  }
  return one;
}

// The all-cores row's note and the result's notes: what "all cores" means for this module.
void DescribeAllCores(const config::ChipConfig& config, const RunModuleResult& run_all,
                      TpuRow& all_row, CompareResult& r) {
  if (r.devices() == 1 && run_all.compiled.cores_per_device > 1) {
    all_row.note = fmt::format(
        "megacore: the one device runs on {} TensorCores sharing the chip's HBM; large dots are "
        "split over them, other ops run on the first",
        run_all.compiled.cores_per_device);
  } else if (r.devices() == 1) {
    const std::string idle = r.config_cores == 1 ? fmt::format("{} has no other core", config.name)
                             : r.config_cores == 2
                                 ? fmt::format("{}'s other core has nothing to run", config.name)
                                 : fmt::format("{}'s other {} cores have nothing to run",
                                               config.name, r.config_cores - 1);
    all_row.note = fmt::format(
        "the module is not replicated (1 replica): it is one program on one core; {}, so this "
        "row is the 1-core run",
        idle);
    r.notes.push_back(fmt::format(
        "all cores: the module has 1 replica, so it runs on 1 of {}'s {} cores; tpusim does not "
        "invent data parallelism. For a data-parallel step give --replicas N with a module whose "
        "all-reduce joins the replicas{}.",
        config.name, r.config_cores,
        r.module_has_collectives ? " (this module has collectives)" : ""));
  } else if (r.partitions > 1) {
    const bool whole = run_all.compiled.spmd && r.cpu.partitions == 1;
    r.notes.push_back(fmt::format(
        "a step is one execution by all {} devices ({} replica(s) x {} partitions): the CPU "
        "evaluates {} device(s){}, the TPU runs the {} devices on {} cores in parallel",
        r.devices(), r.replicas, r.partitions, r.cpu.replicas * r.cpu.partitions,
        whole ? " (the unpartitioned module once per replica)" : "", r.devices(), r.devices()));
  } else {
    r.notes.push_back(fmt::format(
        "a step is one execution by all {} replicas: the CPU evaluates the {} replicas, the TPU "
        "runs them on {} cores in parallel",
        r.replicas, r.replicas, r.replicas));
    if (!r.module_has_collectives) {
      r.notes.push_back(
          "the module has no collectives: its replicas are independent copies (no gradient "
          "exchange)");
    }
  }
}

// Per op: the TPU tags of the all-cores run (cycles, FLOP, bound), then the CPU entry
// instructions the TPU has no tag for; XLA's cost-analysis FLOP for every op of the module.
void AddOpRows(const RunModuleResult& run_all, const hlo::ModuleCost& cost, CompareResult& r) {
  sim::ReportOptions ropts;
  ropts.hlo_opcodes = run_all.hlo_opcodes;
  ropts.compiler_inserted = run_all.hlo_compiler_inserted;
  const std::vector<sim::OpSummary> tpu_ops =
      sim::SummarizeOps(run_all.sim, run_all.compiled.program, ropts);
  const std::vector<sim::OpBoundShare> bounds =
      sim::OpBounds(run_all.sim, run_all.compiled.program);
  const double cores_used = static_cast<double>(std::max<size_t>(1, run_all.sim.cores.size()));
  std::map<std::string, size_t> row_of;
  for (size_t t = 0; t < tpu_ops.size(); ++t) {
    const sim::OpSummary& s = tpu_ops[t];
    OpRow row;
    row.name = s.name;
    row.opcode = s.opcode;
    row.on_tpu = true;
    row.tpu_flops = s.flops;
    row.tpu_cycles = s.cycles;
    row.tpu_seconds = run_all.sim.clock_hz > 0
                          ? static_cast<double>(s.cycles) / cores_used / run_all.sim.clock_hz
                          : 0;
    if (t < bounds.size()) {
      row.bound = bounds[t].bound;
      row.bound_fraction = bounds[t].fraction;
    }
    row_of[row.name] = r.ops.size();
    r.ops.push_back(std::move(row));
  }
  std::map<std::string, double> hlo_flops;
  for (const auto& [inst, c] : cost.per_instruction) {
    hlo_flops[inst->name()] = c.flops * static_cast<double>(r.cpu.replicas * r.cpu.partitions);
  }
  for (const hlo::CpuInstructionTime& t : r.cpu.instructions) {
    if (!t.in_entry || t.opcode == "parameter") continue;
    auto it = row_of.find(t.name);
    if (it == row_of.end()) {
      OpRow row;
      row.name = t.name;
      row.opcode = t.opcode;
      it = row_of.emplace(t.name, r.ops.size()).first;
      r.ops.push_back(std::move(row));
    }
    OpRow& row = r.ops[it->second];
    row.on_cpu = true;
    row.cpu_seconds = t.median_seconds;
  }
  for (OpRow& row : r.ops) {
    auto it = hlo_flops.find(row.name);
    if (it != hlo_flops.end()) row.hlo_flops = it->second;
  }
}

// Per opcode: the ops' CPU and TPU time, by share of the step (CPU + TPU), largest first.
void AddOpcodeRows(const TpuRow& all_row, CompareResult& r) {
  std::map<std::string, OpcodeRow> by_opcode;
  for (const OpRow& row : r.ops) {
    if (row.opcode.empty()) continue;
    OpcodeRow& o = by_opcode[row.opcode];
    o.opcode = row.opcode;
    ++o.count;
    o.cpu_seconds += row.cpu_seconds;
    o.tpu_seconds += row.tpu_seconds;
  }
  const double cpu_total = std::max(r.cpu.median_seconds, 1e-30);
  const double tpu_total = std::max(all_row.seconds_per_step, 1e-30);
  for (auto& [name, o] : by_opcode) r.opcodes.push_back(o);
  std::stable_sort(r.opcodes.begin(), r.opcodes.end(), [&](const OpcodeRow& a, const OpcodeRow& b) {
    return a.cpu_seconds / cpu_total + a.tpu_seconds / tpu_total >
           b.cpu_seconds / cpu_total + b.tpu_seconds / tpu_total;
  });
}

}  // namespace

StatusOr<CompareResult> RunCompare(const hlo::HloModule& module, const std::string& model_path,
                                   const config::ChipConfig& config,
                                   const CompareOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckCompareOptions(options));
  CompareResult r;
  r.model = model_path;
  r.config_name = config.name;
  r.config_cores = config.total_cores();
  // The devices as `tpusim run` counts them (hlo::DevicesToRun), whose partitions are the module's.
  TPUSIM_ASSIGN_OR_RETURN(const int64_t devices, hlo::DevicesToRun(module, options.replicas));
  r.partitions = std::max<int64_t>(1, module.num_partitions());
  r.replicas = devices / r.partitions;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (hlo::IsCollective(inst->opcode())) r.module_has_collectives = true;
    }
  }

  // TPU, all cores (first: a module that does not compile fails before the CPU is timed).
  RunOptions all;
  all.replicas = devices;
  all.seed = options.seed;
  all.check = options.check;
  all.timing_only = options.timing_only;
  all.sim = options.sim;
  TPUSIM_ASSIGN_OR_RETURN(RunModuleResult run_all, RunModule(module, config, all));
  r.check = run_all.check;
  // The slice simulated: `config`, or the slice of its chips sized for the replicas.
  r.config_name = run_all.config.name;
  r.config_cores = run_all.config.total_cores();
  if (!run_all.slice_note.empty()) r.notes.push_back(run_all.slice_note);

  // CPU: all N replicas, warm-up + `repeat` timed runs, per-instruction times. A module tpusim's
  // partitioner split is evaluated whole, once per replica (as the run's check does); a module
  // XLA partitioned, or one with manual regions (partitioned first: RunOnHostCpu), on every
  // device.
  hlo::CpuRunOptions cpu;
  cpu.replicas = r.replicas;
  cpu.partitions = run_all.compiled.spmd && !compiler::spmd::HasManualSharding(module)
                       ? 1
                       : r.partitions;
  cpu.repeat = options.repeat;
  cpu.seed = options.seed;
  cpu.threads = options.threads;
  cpu.time_instructions = true;
  TPUSIM_ASSIGN_OR_RETURN(r.cpu, RunOnHostCpu(module, cpu));
  r.cpu_outside_ops_seconds = MedianOutsideOpsSeconds(r.cpu);
  const hlo::ModuleCost cost = hlo::AnalyzeCost(module);
  const auto cpu_devices = static_cast<double>(r.cpu.replicas * r.cpu.partitions);
  r.cpu_hlo_flops = cost.total.flops * cpu_devices;
  r.cpu_hlo_bytes = cost.total.bytes_accessed * cpu_devices;
  if (options.anchor) r.anchor = MeasureCpuAnchor(r.cpu.threads, options.anchor_budget_seconds);

  // TPU, 1 core.
  TPUSIM_ASSIGN_OR_RETURN(TpuRow one, OneCoreRow(module, config, all, run_all, r));
  TpuRow all_row = RowFromRun(run_all, "all cores");
  DescribeAllCores(config, run_all, all_row, r);
  for (TpuRow* row : {&one, &all_row}) {
    if (row->seconds_per_step > 0) row->speedup = r.cpu.median_seconds / row->seconds_per_step;
  }
  r.tpu = {one, all_row};

  AddOpRows(run_all, cost, r);
  AddOpcodeRows(all_row, r);
  return r;
}

Json CompareJson(const CompareResult& r) {
  Json j = Json::MakeObject();
  j["model"] = r.model;
  j["config"] = r.config_name;
  j["replicas"] = r.replicas;
  j["partitions"] = r.partitions;
  j["config_cores"] = r.config_cores;

  Json& cpu = j["cpu"];
  cpu["seconds_per_step"] = r.cpu.median_seconds;
  cpu["threads"] = r.cpu.threads;
  cpu["min_seconds"] = r.cpu.min_seconds;
  cpu["max_seconds"] = r.cpu.max_seconds;
  Json runs = Json::MakeArray();
  for (double s : r.cpu.run_seconds) runs.push_back(s);
  cpu["runs"] = std::move(runs);
  cpu["warmup_runs"] = 1;
  cpu["devices"] = r.cpu.replicas * r.cpu.partitions;
  cpu["evaluator"] = "tpusim hlo::Evaluator (Eigen), f32 dots in full f32";
  cpu["flops"] = r.cpu_hlo_flops;
  cpu["bytes_accessed"] = r.cpu_hlo_bytes;
  cpu["achieved_flops_per_s"] =
      r.cpu.median_seconds > 0 ? r.cpu_hlo_flops / r.cpu.median_seconds : 0.0;
  if (r.anchor) {
    cpu["fraction_of_gemm_anchor"] =
        r.anchor->gemm_flops_per_s > 0 && r.cpu.median_seconds > 0
            ? r.cpu_hlo_flops / r.cpu.median_seconds / r.anchor->gemm_flops_per_s
            : 0.0;
  }
  cpu["outside_ops_seconds"] = r.cpu_outside_ops_seconds;
  if (r.anchor) j["cpu_anchor"] = r.anchor->ToJson();

  Json tpu = Json::MakeArray();
  for (const TpuRow& t : r.tpu) {
    Json tj = Json::MakeObject();
    tj["label"] = t.label;
    tj["cores"] = t.cores;
    tj["seconds_per_step"] = t.seconds_per_step;
    tj["mxu_utilization"] = t.mxu_utilization;
    tj["cycles"] = t.cycles;
    tj["clock_hz"] = t.clock_hz;
    tj["sequential_runs"] = t.sequential_runs;
    tj["speedup"] = t.speedup;
    if (!t.note.empty()) tj["note"] = t.note;
    tpu.push_back(std::move(tj));
  }
  j["tpu"] = std::move(tpu);
  Json& speedup = j["speedup"];
  speedup = Json::MakeObject();
  speedup["one_core"] = r.tpu.size() > 0 ? r.tpu[0].speedup : 0.0;
  speedup["all_cores"] = r.tpu.size() > 1 ? r.tpu[1].speedup : 0.0;

  Json ops = Json::MakeArray();
  for (const OpRow& o : r.ops) {
    Json oj = Json::MakeObject();
    oj["name"] = o.name;
    oj["opcode"] = o.opcode;
    oj["flops"] = o.flops();
    oj["hlo_flops"] = o.hlo_flops >= 0 ? Json(o.hlo_flops) : Json(nullptr);
    oj["tpu_flops"] = o.tpu_flops;
    oj["cpu_seconds"] = o.on_cpu ? Json(o.cpu_seconds) : Json(nullptr);
    oj["tpu_seconds"] = o.on_tpu ? Json(o.tpu_seconds) : Json(nullptr);
    oj["tpu_cycles"] = o.tpu_cycles;
    oj["bound"] = sim::OpBoundName(o.bound);
    oj["bound_fraction"] = o.bound_fraction;
    ops.push_back(std::move(oj));
  }
  j["ops"] = std::move(ops);
  Json opcodes = Json::MakeArray();
  for (const OpcodeRow& o : r.opcodes) {
    opcodes.push_back(Json::Object{{"opcode", o.opcode},
                                   {"count", o.count},
                                   {"cpu_seconds", o.cpu_seconds},
                                   {"tpu_seconds", o.tpu_seconds}});
  }
  j["opcodes"] = std::move(opcodes);

  Json& check = j["check"];
  check["performed"] = r.check.performed;
  check["passed"] = r.check.performed && r.check.passed;
  check["max_abs_error"] = r.check.max_abs_error;
  check["max_rel_error"] = r.check.max_rel_error;
  if (!r.check.reason.empty()) check["reason"] = r.check.reason;
  Json notes = Json::MakeArray();
  for (const std::string& n : r.notes) notes.push_back(n);
  j["notes"] = std::move(notes);
  return j;
}

std::string CompareText(const CompareResult& r, int top) {
  const std::string devices =
      r.partitions > 1 ? fmt::format("{} replica(s) x {} partitions", r.replicas, r.partitions)
                       : fmt::format("{} replica(s)", r.replicas);
  std::string out = fmt::format("model   {} ({})\nconfig  {} ({} cores)\n\n", r.model, devices,
                                r.config_name, r.config_cores);
  out += fmt::format("{:<34}{:>12}{:>12}{:>10}\n", "per step", "time", "speedup", "MXU util");
  out += fmt::format("{:<34}{:>12}{:>12}{:>10}\n",
                     fmt::format("CPU, this host ({} thread(s))", r.cpu.threads),
                     Sec(r.cpu.median_seconds), "1x", "-");
  for (const TpuRow& t : r.tpu) {
    const std::string label =
        t.label == "1 core" ? fmt::format("TPU {}, 1 core", r.config_name)
                            : fmt::format("TPU {}, all cores ({} used)", r.config_name, t.cores);
    out += fmt::format("{:<34}{:>12}{:>12}{:>10}\n", label, Sec(t.seconds_per_step),
                       t.seconds_per_step > 0 ? Times(t.speedup) : "-", Pct(t.mxu_utilization));
  }
  out += fmt::format(
      "\nCPU: median of {} run(s) after 1 warm-up, min {}, max {}; {} device(s) evaluated\n",
      r.cpu.run_seconds.size(), Sec(r.cpu.min_seconds), Sec(r.cpu.max_seconds),
      r.cpu.replicas * r.cpu.partitions);
  for (const TpuRow& t : r.tpu) {
    out += fmt::format("TPU {}: {} cycles at {:.4g} GHz{}\n", t.label, t.cycles, t.clock_hz / 1e9,
                       t.sequential_runs > 1 ? fmt::format(" x {} runs", t.sequential_runs) : "");
    if (!t.note.empty()) out += fmt::format("  ({})\n", t.note);
  }
  if (r.anchor) {
    const CpuAnchor& a = *r.anchor;
    const double achieved = r.cpu.median_seconds > 0 ? r.cpu_hlo_flops / r.cpu.median_seconds : 0;
    out += fmt::format(
        "\nCPU anchor ({} thread(s), measured now): f32 GEMM {}x{}x{} {:.3g} GFLOP/s; memory triad "
        "{:.3g} GB/s (copy {:.3g}); ridge {:.3g} FLOP/byte\n",
        a.threads, a.gemm_m, a.gemm_k, a.gemm_n, a.gemm_flops_per_s / 1e9,
        a.triad_bytes_per_s / 1e9, a.copy_bytes_per_s / 1e9, a.ridge_flops_per_byte());
    out += fmt::format(
        "CPU on this module: {} FLOP, {} bytes accessed (XLA cost analysis) per step -> {:.3g} "
        "GFLOP/s = {:.1f}% of the GEMM anchor, {:.3g} GB/s = {:.1f}% of triad\n",
        Count(r.cpu_hlo_flops), Count(r.cpu_hlo_bytes), achieved / 1e9,
        a.gemm_flops_per_s > 0 ? 100 * achieved / a.gemm_flops_per_s : 0,
        r.cpu.median_seconds > 0 ? r.cpu_hlo_bytes / r.cpu.median_seconds / 1e9 : 0,
        a.triad_bytes_per_s > 0 && r.cpu.median_seconds > 0
            ? 100 * r.cpu_hlo_bytes / r.cpu.median_seconds / a.triad_bytes_per_s
            : 0);
  }

  auto table = [&](const char* title, auto key) {
    std::vector<const OpRow*> rows;
    for (const OpRow& o : r.ops) {
      if (key(o) > 0) rows.push_back(&o);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const OpRow* a, const OpRow* b) { return key(*a) > key(*b); });
    if (rows.size() > static_cast<size_t>(std::max(top, 0))) rows.resize(static_cast<size_t>(top));
    out += fmt::format("\n{}\n", title);
    out += fmt::format("  {:<26}{:<14}{:>10}{:>11}{:>11}{:>10}  {}\n", "name", "opcode", "FLOP",
                       "CPU", "TPU", "speedup", "TPU bound");
    for (const OpRow* o : rows) {
      out += fmt::format(
          "  {:<26}{:<14}{:>10}{:>11}{:>11}{:>10}  {}\n", o->name, o->opcode, Count(o->flops()),
          o->on_cpu ? Sec(o->cpu_seconds) : "-", o->on_tpu ? Sec(o->tpu_seconds) : "-",
          Ratio(o->cpu_seconds, o->tpu_seconds),
          o->bound == sim::OpBound::kNone
              ? std::string("-")
              : fmt::format("{} {:.0f}%", sim::OpBoundName(o->bound), 100 * o->bound_fraction));
    }
  };
  table("top ops by TPU time (all-cores run; seconds = cycles / cores / clock)",
        [](const OpRow& o) { return o.tpu_seconds; });
  table("top ops by CPU time (median per step)", [](const OpRow& o) { return o.cpu_seconds; });

  out += "\nby opcode (entry instructions)\n";
  out += fmt::format("  {:<22}{:>6}{:>11}{:>11}{:>10}\n", "opcode", "ops", "CPU", "TPU", "speedup");
  int shown = 0;
  for (const OpcodeRow& o : r.opcodes) {
    if (shown++ >= top) break;
    out += fmt::format("  {:<22}{:>6}{:>11}{:>11}{:>10}\n", o.opcode, o.count, Sec(o.cpu_seconds),
                       Sec(o.tpu_seconds), Ratio(o.cpu_seconds, o.tpu_seconds));
  }
  out += fmt::format(
      "\nCPU time outside the ops (evaluator bookkeeping, argument copies; median over the runs): "
      "{}\n",
      Sec(r.cpu_outside_ops_seconds));
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  const CheckResult& c = r.check;
  if (c.performed) {
    out += fmt::format("check: {} ({} elements of the all-cores run vs the CPU evaluator)\n",
                       c.passed ? "PASSED" : "FAILED", c.elements_compared);
    if (!c.passed) out += "  " + c.reason + "\n";
  } else {
    out += fmt::format("check: not performed: {}\n", c.reason);
  }
  return out;
}

std::string CompareOpsCsv(const CompareResult& r) {
  std::string out = "name,opcode,flops,cpu_seconds,tpu_seconds,tpu_cycles,bound,bound_fraction\n";
  for (const OpRow& o : r.ops) {
    out += fmt::format("{},{},{},{},{},{},{},{:.4f}\n", o.name, o.opcode,
                       o.flops() >= 0 ? fmt::format("{:.17g}", o.flops()) : "",
                       o.on_cpu ? fmt::format("{:.9g}", o.cpu_seconds) : "",
                       o.on_tpu ? fmt::format("{:.9g}", o.tpu_seconds) : "", o.tpu_cycles,
                       sim::OpBoundName(o.bound), o.bound_fraction);
  }
  return out;
}

}  // namespace tpusim::driver
