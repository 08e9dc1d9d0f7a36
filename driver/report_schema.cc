#include "driver/report_schema.h"

#include <fmt/format.h>

#include "sim/report/report.h"

namespace tpusim::driver {
namespace {

std::string Table(const std::vector<ReportKey>& keys) {
  std::string out = "| key | type | meaning |\n|---|---|---|\n";
  for (const ReportKey& k : keys) {
    out += fmt::format("| `{}` | {} | {}{} |\n", k.key, k.type, k.optional ? "*optional:* " : "",
                       k.meaning);
  }
  return out;
}

constexpr const char* kStallCategories = R"(## Stall categories

Every cycle of a core (from 0 to its last completion) goes to exactly one category (sim/sim_result.h):

1. `array_active` — some MXU of the core streams LHS rows (TPU v1 "array active").
2. `weight_shift` — no MXU streams; some MXU shifts a weight tile in (exposed weight load).
3. `weight_stall` — neither; some MXU holds a latching matmul waiting for its weights.

Otherwise the MXUs are idle and the cycle goes to the kind of the **oldest unfinished instruction** of the
core (in-order retirement: instance *i* retires at F<sub>i</sub> = max(F<sub>i−1</sub>, completion<sub>i</sub>)
and is charged F<sub>i</sub> − F<sub>i−1</sub> cycles):

4. `hbm_bound` — an HBM ↔ VMEM DMA.
5. `input_data_stall` — a host ↔ HBM DMA (PCIe; TPU v1 "input data stall").
6. `ici_bound` — a remote DMA or a collective.
7. `vpu_bound` — a VPU / XLU instruction, an `mxu.pop` or a `dma.vmem_to_vmem` (the VMEM ports).
8. `raw_sync_stall` — `sync.wait` / `sync.barrier` (TPU v1 "RAW stall": explicit synchronization).
9. `non_matrix` — anything else (scalar issue, a matmul's fill/drain tail).

The same retirement charges give each instruction's `cycles` and, through the program's HLO tags, each
op's `cycles`.
)";

constexpr const char* kCsvAndTrace = R"(## CSV (`tpusim run --csv OPS.csv`)

`name,opcode,cycles,flops,bytes,instructions,compiler_inserted`, one line per entry of `ops`, same
values. In the table printed by `tpusim run`, a compiler-inserted op's name ends with ` *`.

## Trace (`--trace`)

Chrome / Perfetto JSON (`traceEvents`, open it in ui.perfetto.dev), streamed to the file while the run
lasts (sim/trace/trace_writer.h): memory does not grow with the trace. **`ts` and `dur` are
microseconds of simulated time** (cycles / `clock_hz` · 10<sup>6</sup>); every slice's `args` carry
the exact `start_cycle` and `end_cycle`.

- One process per core (`pid` = global core id, named `chip<c>.core<k>`) with the threads
  - `HLO ops`: one slice per stretch of cycles in-order retirement charged to one HLO op or fusion
    (the cycles of `ops`); they never overlap;
  - one per unit (`vpu`, `xlu`, `dma0`…, `ici`, `sequencer`) and, per MXU, one each for its weight
    loads, matmuls and pops (`mxu0 weight loads`, `mxu0 matmuls`, `mxu0 pops`), which overlap in a
    pipelined MXU. One slice per executed instruction, from the cycle its unit took it (scalar
    instructions: their issue) to its completion; `args` add the instruction index `pc` and the HLO
    op `hlo`. An instruction that would overlap a slice of its thread without nesting in it goes to
    an overflow thread (`dma0 (2)`), so slices nest on every thread;
  - a counter `VMEM in use` (bytes): the highest VMEM byte the running HLO op's instructions
    address (its kernel's allocation, which starts at address 0).
- One process per chip (`chip<c> memory and ICI`) with a bandwidth counter (GB/s) per HBM, host link
  and ICI link direction: the transfer network's total rate on it, written at every change.
- `--trace-max-events N` (default 4000000; 0: no limit) caps the slices and counter values written;
  past it the run goes on, a warning on stderr says how much of the run the file holds, and the
  report's `trace` object and the file's `metadata` say `truncated: true`.
  `--trace-window START:END` writes only what overlaps cycles [START, END).
- `metadata` (after `traceEvents`): `clock_hz`, `cycles`, `events_written`, `truncated`,
  `events_dropped`, `first_dropped_cycle` (when truncated), `max_events`, `window_start_cycle`,
  `window_end_cycle` (with a window).

`tpusim trace-check TRACE.json` checks a trace against the trace-event rules Perfetto relies on
(nesting per thread, timestamps that do not decrease per thread and per counter, named pids and
tids, numeric counters); the test suite runs the same check on every trace it writes.
)";

}  // namespace

const std::vector<ReportKey>& SimReportKeys() {
  static const std::vector<ReportKey> kKeys = {
      {"schema_version", "int", fmt::format("{}", sim::kReportSchemaVersion)},
      {"provenance", "object",
       "how the report was made: build, command line, config file, overrides and the whole "
       "effective config (below)"},
      {"config", "string", "the config's `name`"},
      {"cycles", "int",
       "length of the run: the cycle at which the last instruction of any core completed"},
      {"seconds", "double", "`cycles / clock_hz`"},
      {"clock_hz", "double", "core clock (Hz)"},
      {"flops", "int",
       "FLOP executed: MXU (2·M·K·N per `mxu.matmul`) + VPU (1 per arithmetic element)"},
      {"mxu_flops", "int", "the MXU part of `flops`"},
      {"vpu_flops", "int", "the VPU part of `flops`"},
      {"achieved_flops_per_s", "double", "`flops / seconds`"},
      {"peak_flops_per_s", "double",
       "bf16 peak of the cores the program uses: cores · MXUs · R · C · 2 · clock"},
      {"fraction_of_peak", "double", "`achieved_flops_per_s / peak_flops_per_s`"},
      {"mxu_utilization", "double 0–1", "useful MACs / (R · C · MXUs per core · cores · `cycles`)"},
      {"instructions_executed", "int",
       "dynamic instruction count, all cores (loop iterations count)"},
      {"hbm", "object",
       "`bytes_read`, `bytes_written` (all HBM servers), `bandwidth_bytes_per_s` ((read + written) "
       "/ seconds), `peak_bandwidth_bytes_per_s` (configured, chips used), `utilization`"},
      {"vmem", "object",
       "`bytes_read`, `bytes_written` by the MXUs and VPUs (DMA traffic is counted at HBM / ICI)"},
      {"host", "object", "`bytes`: bytes over the host (PCIe) links"},
      {"stalls", "object", "category → core cycles, summed over cores (below)"},
      {"cores", "array",
       "per core: `core` (global id), `path` (`chip0.core1`), `cycles` (its last completion), "
       "`flops`, `mxu_flops`, `mxu_utilization`, `instructions_executed`, `stalls` (category → "
       "cycles; they sum to the core's `cycles`)"},
      {"ops", "array",
       "per HLO tag of the program, in tag order, plus `(untagged)` if any instruction has none: "
       "`name`, `opcode` (from the HLO module when the caller passes it, else the name without "
       "XLA's `.N` suffix), `cycles` (attributed core cycles, summed over cores), `flops`, `bytes` "
       "(DMA/ICI bytes and VMEM bytes of the op's instructions), `hbm_bytes` (the part moved by "
       "HBM ↔ VMEM DMAs: the op's HBM traffic, the x-axis of a roofline), `instructions` "
       "(executed), `compiler_inserted` (true for an op the compiler's passes added: no "
       "instruction of that name in the input module — a layout transpose, copy, pad, SPMD "
       "collective or combined op)"},
      {"ici", "array",
       "per ICI link direction: `link` (`chip0.ici.x+` = the link leaving chip 0 towards +x), "
       "`bytes`, `busy_cycles` (cycles with a transfer on it), `bandwidth_bytes_per_s` (bytes / "
       "seconds)"},
      {"units", "object",
       "every registered stat: unit path → {counter name → value}; e.g. `chip0.core0.mxu0` has "
       "`matmuls`, `weight_loads`, `pops`, `array_active_cycles`, `busy_cycles`, "
       "`fill_drain_cycles`, `weight_shift_cycles`, `weight_stall_cycles`, `pop_cycles`, "
       "`useful_macs`, `flop`, `vmem_bytes_read`, `vmem_bytes_written`; `chip0.core0.sequencer` "
       "has `instructions`, `issue_cycles`, `sync_wait_cycles`, `barrier_cycles`, "
       "`scoreboard_stall_cycles`, `queue_full_cycles`; `chip0.hbm`, `chip0.host`, `chip0.ici.x+` "
       "have `busy_cycles`, `bytes_read`, `bytes_written`, `bytes`"},
  };
  return kKeys;
}

const std::vector<ReportKey>& RunReportKeys() {
  static const std::vector<ReportKey> kKeys = {
      {"model", "string", "the HLO file as given on the command line"},
      {"replicas", "int", "devices of the module (replicas × partitions)"},
      {"partitions", "int", "the module's num_partitions (1 unless SPMD-partitioned)"},
      {"cores_per_device", "int",
       "1, or the chip's TensorCores when megacore split the device's dots over them "
       "(compiler/compile.h)"},
      {"slice", "object",
       "the chips simulated: `chips`, `tensorcores_per_chip`, `topology` (`single`, `ring`, "
       "`torus2d`, `torus3d`), `shape`, `derived` (true when a single-chip config was grown into "
       "the smallest slice holding the module's devices, config/slice.h), `note` (what was "
       "derived)"},
      {"timing_only", "bool", "true when no values were computed (cycles only)"},
      {"fast_forward", "object",
       "`trips_skipped` (loop trips not simulated one by one because their timing repeated an "
       "earlier trip's exactly, sim/fast_forward.h) and `cycles_skipped` (the simulated cycles "
       "they "
       "span); both 0 with --no-fast-forward or when values are computed. Every other figure is "
       "the same with and without fast-forward"},
      {"if_converted_conditionals", "array",
       "when the module has conditionals: their names. Each ran every branch (if-conversion, "
       "compiler/passes/call_inliner.h), so their cycles are an upper bound on a TPU's",
       true},
      {"pallas_kernels", "array",
       "when the module has Pallas TPU kernels (custom-call tpu_custom_call), timed from their "
       "cost (compiler/lower/lower_kernel_estimate.cc): one object per kernel with `name`, "
       "`flops`, `transcendentals`, `bytes_accessed`, `remote_bytes_transferred` (not modelled) "
       "and `declared` (true: the kernel's cost_estimate; false: it declares none and is timed as "
       "a lower bound, its operands and results through HBM once and no FLOP). The run is "
       "timing-only",
       true},
      {"host_offloads", "object",
       "when the module has host-offload annotations (MoveToHost, MoveToDevice, "
       "annotate_device_placement): `annotations` (their names) and `bytes` (their arrays' bytes, "
       "at most what XLA's host offloader moves over the host link). They ran as identities "
       "and the cycles do not include those transfers (compiler/passes/annotation_custom_calls.h)",
       true},
      {"trip_counts_given", "array",
       "when `--trip-count` gave the count of a data-dependent while: \"name=N\" for each; the "
       "run is timing-only and its cycles are those of N trips",
       true},
      {"trip_counts_counted", "array",
       "when a data-dependent while's count was counted by the CPU evaluator on the run's own "
       "inputs (values small enough to evaluate): \"name=N\" for each. Such a while runs as an "
       "ISA loop that computes its condition every trip and leaves on a false one "
       "(`ctrl.break_unless`): with values the condition decides the trips and the run stays "
       "checked; a timing-only run assumes N",
       true},
      {"collectives", "object",
       "`per_core`: per core `core`, `path`, `cycles`, `collective_cycles` (its `ici_bound` stall "
       "cycles: waiting on a collective or remote DMA), `compute_cycles` (`cycles − "
       "collective_cycles`), `ici_unit_busy_cycles` (its collective unit, arrival to completion), "
       "`ici_bytes_sent`, `collectives` (completed); `links`: per ICI link direction `link`, "
       "`bytes`, `busy_cycles`, `busy_bandwidth_bytes_per_s` (bytes / busy time: the achieved "
       "rate while transferring), `average_bandwidth_bytes_per_s` (bytes / seconds)"},
      {"compile", "object",
       "`hbm_bytes_used_per_core`, `peak_vmem_bytes` (bytes), `passes` (the compiler passes run, "
       "in order), `instructions` (static ISA instructions, all cores)"},
      {"check", "object",
       "`performed`, `passed`, `max_abs_error`, `max_rel_error` (vs the CPU evaluator with TPU "
       "DEFAULT-precision dots), `tolerance` {`atol`, `rtol`} (an output of bf16, f16 or an f8 "
       "type allows at least one unit in its last place: rtol raised to 2^-mantissa bits), "
       "`reference`, `max_abs_error_vs_f32`, `max_rel_error_vs_f32` (vs a full-f32 evaluation: "
       "the price of "
       "bf16 MXU passes, not checked), `largest_abs_value_f32`, "
       "`elements_outside_tolerance_vs_f32` (same tolerance), `elements_non_finite`, "
       "`elements_non_finite_vs_f32` (inf or NaN on one side only: counted as mismatches, not in "
       "the max figures), `dot_layers` (dot and convolution "
       "instructions of the module), `vs_f32_note` (when some element is beyond the tolerance "
       "vs f32: where the difference comes from, in words), `elements_compared`, `partition_note` (a "
       "module tpusim's SPMD partitioner split whose values differ from the unpartitioned "
       "module's: whether they equal the partitioned program's on the evaluator and whether that "
       "program equals the module in f64, which decide `passed`; driver/partition_check.h), "
       "`unpartitioned_mismatches` (with it: the elements beyond the tolerance against the "
       "unpartitioned module), `reason` (why it was skipped, or the first mismatch)"},
      {"scaling", "array",
       "with `--scaling 1,2,4,8`: per core count `cores`, `cycles`, `seconds`, `speedup`, "
       "`efficiency`, `collective_cycles` (largest over cores), `check`. Weak scaling (each "
       "replica runs the module's per-replica batch): `speedup = (cores / first cores) · first "
       "cycles / cycles` (throughput), `efficiency = speedup / (cores / first cores)`. The rest of "
       "the report is the last count's run. With `--steps` / `--host-input` each row adds "
       "`step_seconds` (the pipelined step with the host), `examples_per_second`, `step_speedup` "
       "(examples/s vs the first row) and `bound`",
       true},
      {"host_loop", "object",
       "with `--steps N` / `--host-input` (driver/host_loop.h): `steps`, `replicas`, "
       "`hosts`, `examples_per_replica`, `infeed_bytes_per_replica`, `outfeed_bytes_per_replica`, "
       "`input_parameters` (parameter numbers fed over PCIe), `per_step` {`device_seconds`, "
       "`host_cpu_seconds`, `pcie_seconds`, `host_seconds` (CPU + PCIe), `wall_seconds` (max of "
       "the three stages: pipelined), `overlap_seconds` (device + host - wall)}, "
       "`total_seconds` (N steps), `examples_per_second`, `bound` (`host CPU`, `PCIe` or "
       "`device`), `model` (the `host.*` config keys used)",
       true},
      {"trace", "object",
       "with `--trace`: `file`, `events_written`, `truncated` (the `--trace-max-events` cap was "
       "reached: the file holds only the start of the run), `events_dropped`, "
       "`first_dropped_cycle`, `max_events`, `window_start_cycle`, `window_end_cycle` (below)",
       true},
  };
  return kKeys;
}

const std::vector<ReportKey>& ProvenanceKeys() {
  static const std::vector<ReportKey> kKeys = {
      {"tpusim_version", "string", "the project version (`tpusim --version`)"},
      {"git_commit", "string",
       "the source tree's commit when the build was configured, `-dirty` appended when tracked "
       "files had uncommitted changes; `unknown` outside a git checkout"},
      {"command_line", "string",
       "the command, quoted so that a POSIX shell reads it back (from the Python package: the "
       "interpreter and its `sys.argv`)"},
      {"argv", "array", "the same, one string per argument"},
      {"python_call", "string",
       "reports made by the Python package only: the call, e.g. `tpusim.run('m.hlo', "
       "config='tpu-v2-8', replicas=8)` (the arguments given, not the defaults)",
       true},
      {"config_file", "string", "the YAML file `--config` resolved to"},
      {"overrides", "array",
       "the `--set KEY=VALUE` given, in order: `{\"key\", \"value\"}` (the value as typed)"},
      {"effective_config", "object",
       "every config key (docs/config.md) with the value the run used, after `base:` and "
       "`--set`, nested like the YAML: saved as a file it reproduces the chip. For a single-chip "
       "config grown into a slice, `system.*` is the config's; `slice` says what ran"},
  };
  return kKeys;
}

std::string ReportSchemaMarkdown() {
  std::string out = fmt::format(
      "# Simulation report schema (`schema_version: {}`)\n\n"
      "<!-- Generated by `tpusim report-schema` from driver/report_schema.cc; edit that "
      "file, not this one. -->\n\n",
      sim::kReportSchemaVersion);
  out +=
      "`tpusim run --report out.json` (and `--json`) writes one JSON object. Its simulation part "
      "is built by `sim::BuildReportJson` (sim/report/report.cc) from a finished run; `tpusim "
      "exec --report` writes that part and `provenance`. Objects keep the key order below. Counts "
      "are integers, rates are doubles. \"Core cycles\" are cycles of the core clock "
      "(`clock_hz`).\n\n";
  out += Table(SimReportKeys());
  out += "\n`tpusim run` adds (driver/run_report.cc, scaling.cc):\n\n";
  out += Table(RunReportKeys());
  out +=
      "\n## Provenance\n\n`provenance` (driver/provenance.h) makes a report traceable to "
      "the build, the command and the chip that produced it; reports of a sweep differ in "
      "`overrides` and `effective_config`:\n\n";
  out += Table(ProvenanceKeys());
  out += "\n";
  out += kStallCategories;
  out += "\n";
  out += kCsvAndTrace;
  return out;
}

}  // namespace tpusim::driver
