// `tpusim compare`: the simulated TPU time of an HLO module beside the measured CPU time of the
// same module on this host, per step and per op, with speedups and a CPU anchor (the host's own
// GEMM rate and memory bandwidth) — the table people otherwise make by hand (DESIGN.md §7).
//
// What is compared (the same work on every row):
//  * N = the devices `tpusim run` configures (hlo::DevicesToRun: --replicas, else the module's
//    replica_count x num_partitions or the devices its collectives name). A step is one execution of
//    the module by all N devices. A partitioned module (num_partitions P > 1) runs as N / P replicas
//    of P partitions: the CPU evaluates it whole per replica when tpusim's partitioner split it, on
//    all N devices when XLA did; its 1-core row is not simulated.
//  * CPU: the evaluator (hlo/eval) runs all N replicas in lockstep on `threads` host threads;
//    one warm-up run, then `repeat` timed runs; seconds_per_step is their median (min and max are
//    reported as the spread). Per-op CPU time comes from the same runs through
//    EvaluatorOptions::on_instruction (median over the runs of each entry instruction's time).
//  * TPU, all cores: the N replicas simulated on N cores of the config (driver/run_module.h),
//    seconds_per_step = cycles / clock_hz. With N = 1 the module is one program on one core: the
//    config's other cores have nothing to run, so "all cores" is the same run as "1 core" (the row
//    says so; tpusim never invents data parallelism the module does not have).
//  * TPU, 1 core: with N = 1, the run above. With N > 1, one replica is simulated on one core
//    (collectives over a group of one: the identity) and the step's N replicas are counted as run
//    one after another: seconds_per_step = N * cycles / clock_hz. This leaves out the gradient sum
//    a single core would do instead of the all-reduce (an estimate; the row says so).
//  * speedup = CPU seconds_per_step / TPU seconds_per_step.
//
// Per op (joined by HLO instruction name): the TPU side is the all-cores run's per-op attribution
// (sim::SummarizeOps: cycles charged by in-order retirement, summed over cores), as seconds =
// cycles / cores / clock_hz (the mean core's share: replicas run an op at the same time). The CPU
// side is the entry instruction's evaluation time for all N devices. Ops the compiler created
// (names not in the module) have no CPU time; instructions the compiler made free (parameter,
// tuple, get-tuple-element, bitcast-like reshapes) have no TPU cycles.
//
// What bounds an op on the TPU: sim/report/op_bound.h (the class of its instructions charged the
// most of its retirement cycles, with that share).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "config/chip_config.h"
#include "driver/cpu_anchor.h"
#include "driver/run_module.h"
#include "hlo/eval/cpu_run.h"
#include "hlo/module.h"
#include "sim/report/op_bound.h"

namespace tpusim::driver {

struct CompareOptions {
  int64_t replicas = 0;  // devices (replicas x partitions); 0: the module's (hlo::DevicesToRun)
  int repeat = 5;        // timed CPU runs after one warm-up (>= 1)
  int threads = 0;       // CPU threads; 0: all hardware threads
  uint64_t seed = 42;    // inputs of both sides
  bool anchor = true;    // measure the CPU anchor (< 1 s)
  double anchor_budget_seconds = 0.6;
  bool check = true;  // check the all-cores run's values against the evaluator (tpusim run)
  bool timing_only = false;
  int top = 8;  // rows of each top-ops table in the text
  sim::SimOptions sim;
};

/// One simulated configuration.
struct TpuRow {
  std::string label;            // "1 core" or "all cores"
  int64_t cores = 1;            // cores the program runs on (= replicas simulated)
  int64_t sequential_runs = 1;  // simulated runs counted one after another per step
  uint64_t cycles = 0;          // cycles of one simulated run
  double clock_hz = 0;
  double seconds_per_step = 0;  // sequential_runs * cycles / clock_hz
  double mxu_utilization = 0;   // of the cores used, over the run
  double speedup = 0;           // CPU seconds_per_step / seconds_per_step
  std::string note;             // how the row was obtained when it is not a plain run
};

struct OpRow {
  std::string name;
  std::string opcode;
  double hlo_flops = -1;    // XLA's cost analysis x N devices (-1: not in the module)
  uint64_t tpu_flops = 0;   // simulated FLOP, all cores
  bool on_tpu = false;      // the compiled program has the tag
  bool on_cpu = false;      // the evaluator timed it
  uint64_t tpu_cycles = 0;  // attributed cycles summed over cores
  double tpu_seconds = 0;   // tpu_cycles / cores / clock_hz
  double cpu_seconds = 0;   // median over the CPU runs
  sim::OpBound bound = sim::OpBound::kNone;  // sim/report/op_bound.h
  double bound_fraction = 0;  // share of the op's cycles charged to the bound's class
  double flops() const { return on_tpu ? static_cast<double>(tpu_flops) : hlo_flops; }
};

struct OpcodeRow {
  std::string opcode;
  int64_t count = 0;  // instructions of the entry computation with this opcode (either side)
  double cpu_seconds = 0;
  double tpu_seconds = 0;
};

struct CompareResult {
  std::string model;
  std::string config_name;
  int64_t config_cores = 1;
  int64_t replicas = 1;    // N: the devices simulated / partitions
  int64_t partitions = 1;  // the module's num_partitions (every replica runs all of them)
  int64_t devices() const { return replicas * partitions; }
  bool module_has_collectives = false;
  hlo::CpuRunResult cpu;
  double cpu_hlo_flops = 0;            // XLA cost analysis, all devices
  double cpu_hlo_bytes = 0;            // bytes accessed, all devices
  double cpu_outside_ops_seconds = 0;  // median over the runs of (run - its entry instructions)
  std::optional<CpuAnchor> anchor;
  std::vector<TpuRow> tpu;         // [0] 1 core, [1] all cores
  std::vector<OpRow> ops;          // every op of either side, in TPU tag order then CPU order
  std::vector<OpcodeRow> opcodes;  // by total CPU + TPU share, descending
  CheckResult check;               // of the all-cores run
  std::vector<std::string> notes;  // what was done, in words (printed and in the JSON)
};

/// Runs the CPU measurement, the anchor and the simulations. Errors: bad options
/// (InvalidArgument), the evaluator's, the compiler's and the simulator's (as `tpusim run`).
StatusOr<CompareResult> RunCompare(const hlo::HloModule& module, const std::string& model_path,
                                   const config::ChipConfig& config, const CompareOptions& options);

/// JSON: {"model", "config", "replicas", "partitions", "config_cores", "cpu" {"seconds_per_step", "threads",
/// "min_seconds", "max_seconds", "runs", "devices", "flops", "achieved_flops_per_s", ...},
/// "cpu_anchor" {...} (CpuAnchor::ToJson), "tpu" [{"label", "cores", "seconds_per_step",
/// "mxu_utilization", "cycles", "clock_hz", "sequential_runs", "speedup", "note"}],
/// "speedup" {"one_core", "all_cores"}, "ops" [...], "opcodes" [...], "check" {...}, "notes"}.
Json CompareJson(const CompareResult& r);

/// The readable tables printed on stdout (top `top` ops by TPU time and by CPU time).
std::string CompareText(const CompareResult& r, int top);

/// "name,opcode,flops,cpu_seconds,tpu_seconds,tpu_cycles,bound,bound_fraction" + one line per op.
std::string CompareOpsCsv(const CompareResult& r);

}  // namespace tpusim::driver
