#include "driver/run_report.h"

#include <fmt/format.h>

#include <string>

#include "config/slice.h"
#include "sim/report/collectives.h"
#include "sim/report/report.h"

namespace tpusim::driver {

std::string F32Note(const CheckResult& c) {
  if (!c.performed || c.elements_outside_tolerance_vs_f32 == 0) return "";
  std::string note = fmt::format(
      "the difference from f32 is bf16 rounding: at DEFAULT precision the MXU multiplies f32 "
      "operands as bf16 (8-bit mantissa), and the rounding is carried through the module's {} "
      "dot/convolution layer(s) — a TPU gives the same; the check above, with the same numerics, "
      "is the one that says whether the simulation is right",
      c.dot_layers);
  if (c.elements_non_finite_vs_f32 > 0) {
    note += fmt::format(
        "; {} element(s) overflow to inf (or are NaN) in one numerics and not in the other — a "
        "rounding difference carried past the largest finite value — and are counted, not "
        "included in the max abs / rel figures",
        c.elements_non_finite_vs_f32);
  }
  if (c.max_rel_error_vs_f32 > 1) {
    note += fmt::format(
        "; the max rel error {:.3g} comes from elements whose f32 value is near 0, where any "
        "rounding is a large relative change",
        c.max_rel_error_vs_f32);
  }
  return note;
}

Json RunReportJson(const RunModuleResult& r, const std::string& model_path) {
  sim::ReportOptions ropts;
  ropts.hlo_opcodes = r.hlo_opcodes;
  ropts.compiler_inserted = r.hlo_compiler_inserted;
  Json j = sim::BuildReportJson(r.sim, r.compiled.program, ropts);
  j["model"] = model_path;
  j["replicas"] = r.replicas;
  j["partitions"] = r.partitions;
  j["cores_per_device"] = r.compiled.cores_per_device;
  j["slice"] = config::SliceJson(r.config, r.slice_note);
  j["timing_only"] = r.timing_only;
  j["fast_forward"]["trips_skipped"] = r.sim.fast_forward_trips;
  j["fast_forward"]["cycles_skipped"] = r.sim.fast_forward_cycles;
  if (!r.compiled.if_converted_conditionals.empty()) {
    Json::Array names;
    for (const std::string& n : r.compiled.if_converted_conditionals) names.push_back(Json(n));
    j["if_converted_conditionals"] = Json(std::move(names));
  }
  if (!r.compiled.cost_estimated_kernels.empty()) {
    Json::Array kernels;
    for (const auto& k : r.compiled.cost_estimated_kernels) {
      kernels.push_back(Json::Object{{"name", k.name},
                                     {"flops", k.estimate.flops},
                                     {"transcendentals", k.estimate.transcendentals},
                                     {"bytes_accessed", k.estimate.bytes_accessed},
                                     {"remote_bytes_transferred", k.estimate.remote_bytes},
                                     {"declared", k.declared}});
    }
    j["pallas_kernels"] = Json(std::move(kernels));
  }
  if (!r.compiled.host_offloads.empty()) {
    Json::Array names;
    for (const std::string& n : r.compiled.host_offloads) names.push_back(Json(n));
    j["host_offloads"] = Json::Object{{"annotations", Json(std::move(names))},
                                      {"bytes", r.compiled.host_offload_bytes}};
  }
  if (!r.compiled.given_trip_counts.empty() || !r.compiled.branch_loops.empty()) {
    Json::Array given, counted;
    for (const std::string& n : r.compiled.given_trip_counts) given.push_back(Json(n));
    for (const std::string& n : r.compiled.branch_loops) counted.push_back(Json(n));
    if (!given.empty()) j["trip_counts_given"] = Json(std::move(given));
    if (!counted.empty()) j["trip_counts_counted"] = Json(std::move(counted));
  }
  j["collectives"] = sim::CollectiveReportJson(r.sim);
  Json& comp = j["compile"];
  comp["hbm_bytes_used_per_core"] = r.compiled.hbm_bytes_used;
  comp["peak_vmem_bytes"] = r.compiled.peak_vmem_bytes;
  comp["passes"] = r.compiled.pass_names;
  comp["instructions"] = [&] {
    int64_t n = 0;
    for (const auto& core : r.compiled.program.cores)
      n += static_cast<int64_t>(core.instructions.size());
    return n;
  }();
  const CheckResult& c = r.check;
  Json& check = j["check"];
  check["performed"] = c.performed;
  check["passed"] = c.performed && c.passed;
  check["max_abs_error"] = c.max_abs_error;
  check["max_rel_error"] = c.max_rel_error;
  check["tolerance"] = Json::Object{{"atol", c.atol}, {"rtol", c.rtol}};
  check["reference"] = "hlo::Evaluator with TPU DEFAULT-precision dots (bf16 operands)";
  check["max_abs_error_vs_f32"] = c.max_abs_error_vs_f32;
  check["max_rel_error_vs_f32"] = c.max_rel_error_vs_f32;
  check["largest_abs_value_f32"] = c.largest_abs_value_f32;
  check["elements_outside_tolerance_vs_f32"] = c.elements_outside_tolerance_vs_f32;
  check["elements_non_finite"] = c.elements_non_finite;
  check["elements_non_finite_vs_f32"] = c.elements_non_finite_vs_f32;
  check["dot_layers"] = c.dot_layers;
  const std::string note = F32Note(c);
  if (!note.empty()) check["vs_f32_note"] = note;
  check["elements_compared"] = c.elements_compared;
  if (!c.partition_note.empty()) {
    check["partition_note"] = c.partition_note;
    check["unpartitioned_mismatches"] = c.unpartitioned_mismatches;
  }
  if (!c.reason.empty()) check["reason"] = c.reason;
  return j;
}

std::string RunReportText(const RunModuleResult& r, const std::string& model_path) {
  sim::ReportOptions ropts;
  ropts.hlo_opcodes = r.hlo_opcodes;
  ropts.compiler_inserted = r.hlo_compiler_inserted;
  const std::string devices = r.partitions > 1
                                  ? fmt::format("{} devices: {} replica(s) x {} partitions",
                                                r.replicas, r.replicas / r.partitions, r.partitions)
                                  : fmt::format("{} replica(s)", r.replicas);
  std::string out = fmt::format("model             {} ({}{})\n", model_path, devices,
                                r.timing_only ? ", timing-only" : "");
  if (!r.slice_note.empty()) out += "note              " + r.slice_note + "\n";
  if (!r.compiled.if_converted_conditionals.empty()) {
    out += fmt::format(
        "note              {} conditional(s) (%{}{}) run every branch (if-conversion), so their "
        "cycles are an upper bound on a TPU's\n",
        r.compiled.if_converted_conditionals.size(), r.compiled.if_converted_conditionals.front(),
        r.compiled.if_converted_conditionals.size() > 1 ? ", ..." : "");
  }
  for (const auto& k : r.compiled.cost_estimated_kernels) {
    if (!k.declared) {
      out += fmt::format(
          "note              Pallas kernel %{} declares no cost_estimate: timed as a LOWER BOUND, "
          "its operands and results through HBM once ({} bytes), no FLOP\n",
          k.name, k.estimate.bytes_accessed);
      continue;
    }
    out += fmt::format(
        "note              Pallas kernel %{} timed from its cost_estimate: {} FLOP on the MXUs, "
        "{} transcendentals on the VPU and {} bytes through HBM, overlapped{}\n",
        k.name, k.estimate.flops, k.estimate.transcendentals, k.estimate.bytes_accessed,
        k.estimate.remote_bytes > 0
            ? fmt::format(" ({} remote bytes over ICI not modelled)", k.estimate.remote_bytes)
            : std::string());
  }
  if (!r.compiled.host_offloads.empty()) {
    const double bandwidth = r.config.host_bandwidth_bytes_per_s;
    out += fmt::format(
        "note              {} host-offload annotation(s) (%{}{}) ran as identities: XLA's host "
        "offloader keeps those values in host memory and moves up to {} bytes over the host link "
        "({:.3g} us at chip.host.bandwidth_bytes_per_s), time these cycles do not include\n",
        r.compiled.host_offloads.size(), r.compiled.host_offloads.front(),
        r.compiled.host_offloads.size() > 1 ? ", ..." : "", r.compiled.host_offload_bytes,
        bandwidth > 0 ? 1e6 * static_cast<double>(r.compiled.host_offload_bytes) / bandwidth : 0.0);
  }
  for (const std::string& counted : r.compiled.branch_loops) {
    if (counted.ends_with("=0")) {
      out += fmt::format(
          "note              while %{} trips: the CPU evaluator saw it run no trip on this run's "
          "inputs (or never reach it: inside a conditional branch they do not take, which the "
          "device computes too and discards); it is lowered as its initial state\n",
          counted);
      continue;
    }
    const bool varies = r.varying_trip_counts.count(counted.substr(0, counted.rfind('='))) > 0;
    out += fmt::format(
        "note              while %{} trips: counted by the CPU evaluator on this run's inputs (its "
        "count depends on data{}); it runs as an ISA loop that computes its condition every trip "
        "and leaves on a false one (ctrl.break_unless){}\n",
        counted, varies ? "; the most of its executions, whose counts differ" : "",
        r.timing_only ? "; this timing-only run assumes that count" : ", which decided the trips");
  }
  for (const std::string& given : r.compiled.given_trip_counts) {
    out += fmt::format(
        "note              while %{} trips: given by --trip-count (its count depends on data); it "
        "runs as an ISA loop that computes its condition every trip and leaves on a false one "
        "(ctrl.break_unless), and the cycles are those of that many trips and one more "
        "condition\n",
        given);
  }
  if (r.compiled.cores_per_device > 1) {
    out += fmt::format(
        "megacore          each device runs on {} TensorCores sharing the chip's HBM: large dots "
        "are split by columns over them, other ops run on the first (--no-megacore: one core)\n",
        r.compiled.cores_per_device);
  }
  out += sim::BuildReportTable(r.sim, r.compiled.program, ropts);
  out += sim::CollectiveReportText(r.sim);
  const CheckResult& c = r.check;
  if (!c.performed) {
    out += fmt::format("check             not performed: {}\n", c.reason);
  } else {
    out += fmt::format(
        "check             {}: {} elements vs the CPU evaluator with the TPU's DEFAULT-precision "
        "dots, max abs error {:.3g}, max rel error {:.3g} (tolerance {:g} + {:g}*|ref|){}\n",
        c.passed ? "PASSED" : "FAILED", c.elements_compared, c.max_abs_error, c.max_rel_error,
        c.atol, c.rtol,
        c.elements_non_finite > 0
            ? fmt::format("; {} element(s) non-finite on one side only", c.elements_non_finite)
            : "");
    out += fmt::format(
        "                  vs full f32 (XLA's CPU numerics; not checked): max abs {:.3g} = {:.3g}% "
        "of "
        "the largest |value| {:.3g}{}; {} of {} elements beyond the tolerance\n",
        c.max_abs_error_vs_f32,
        c.largest_abs_value_f32 > 0 ? 100 * c.max_abs_error_vs_f32 / c.largest_abs_value_f32 : 0.0,
        c.largest_abs_value_f32,
        c.elements_non_finite_vs_f32 > 0
            ? fmt::format(" over the finite elements, {} non-finite on one side only",
                          c.elements_non_finite_vs_f32)
            : "",
        c.elements_outside_tolerance_vs_f32, c.elements_compared);
    const std::string note = F32Note(c);
    if (!note.empty()) out += "                  " + note + "\n";
    if (!c.partition_note.empty()) {
      out += fmt::format("                  vs the unpartitioned module: {} element(s) beyond the "
                         "tolerance; {}\n",
                         c.unpartitioned_mismatches, c.partition_note);
    }
    if (!c.passed) out += "                  " + c.reason + "\n";
  }
  return out;
}

}  // namespace tpusim::driver
