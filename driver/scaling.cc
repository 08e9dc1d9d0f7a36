#include "driver/scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/diagnostic.h"
#include "hlo/parser.h"
#include "hlo/sharding.h"

namespace tpusim::driver {
namespace {

// Largest device id + 1 named by any collective, at least replica_count.
int64_t NamedDevices(const hlo::HloModule& m) {
  int64_t n = std::max<int64_t>(1, m.replica_count());
  for (const auto& comp : m.computations()) {
    for (const auto& inst : comp->instructions()) {
      const hlo::ReplicaGroups& g = inst->replica_groups();
      for (const auto& group : g.groups) {
        for (int64_t id : group) n = std::max(n, id + 1);
      }
      if (g.iota_form) {
        int64_t prod = 1;
        for (int64_t d : g.iota.dims) prod *= d;
        n = std::max(n, prod);
      }
      for (const auto& [s, t] : inst->source_target_pairs()) n = std::max({n, s + 1, t + 1});
    }
  }
  return n;
}

// True if `groups` is one explicit group holding each of 0..n-1 once.
bool IsAllDevices(const hlo::ReplicaGroups& groups, int64_t n) {
  if (groups.iota_form || groups.groups.size() != 1) return false;
  std::vector<int64_t> ids = groups.groups[0];
  std::sort(ids.begin(), ids.end());
  if (static_cast<int64_t>(ids.size()) != n) return false;
  for (int64_t i = 0; i < n; ++i) {
    if (ids[static_cast<size_t>(i)] != i) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::vector<int64_t>> ParseCoreCounts(std::string_view list) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view item = list.substr(pos, end - pos);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v <= 0) {
      return InvalidArgument(fmt::format(
          "--scaling {}: expected a comma-separated list of positive core counts, got '{}'", list,
          item));
    }
    if (v > hlo::kMaxDevices) {
      return InvalidArgument(
          fmt::format("--scaling {}: core count {} is more than the {} devices "
                      "tpusim simulates",
                      list, v, hlo::kMaxDevices));
    }
    if (!out.empty() && v <= out.back()) {
      return InvalidArgument(fmt::format("--scaling {}: core counts must increase ({} after {})",
                                         list, v, out.back()));
    }
    out.push_back(v);
    pos = end + 1;
  }
  return out;
}

Status RetargetReplicas(hlo::HloModule& module, int64_t cores, std::string_view file,
                        std::string_view source) {
  if (module.num_partitions() > 1) {
    return Unimplemented(fmt::format(
        "{}: --scaling varies the replica count; this module has num_partitions={} (SPMD), whose "
        "per-device shapes are fixed by its partitioning",
        file, module.num_partitions()));
  }
  const int64_t devices = NamedDevices(module);
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      const bool pairs = !inst->source_target_pairs().empty();
      hlo::ReplicaGroups& g = inst->mutable_replica_groups();
      if (!pairs && !g.iota_form && g.groups.empty()) continue;  // {}: all replicas, any count
      if (!pairs && IsAllDevices(g, devices)) {
        g = hlo::ReplicaGroups{};  // one group of every device == all replicas
        continue;
      }
      if (cores != devices) {
        const std::string what =
            pairs ? std::string("source_target_pairs") : "replica_groups=" + g.ToString();
        return InvalidArgument(FormatDiagnostic(
            file, source, inst->location(),
            fmt::format("--scaling: %{} ({}) has {} naming {} devices, so the module runs only on "
                        "{} cores, not {}",
                        inst->name(), hlo::HloOpcodeString(inst->opcode()), what, devices, devices,
                        cores)));
      }
    }
  }
  module.set_replica_count(cores);
  return OkStatus();
}

StatusOr<ScalingRuns> RunScaling(std::string_view source, const std::string& file,
                                 const config::ChipConfig& chip, RunOptions options,
                                 const std::vector<int64_t>& core_counts,
                                 const HostLoopOptions* host) {
  ScalingRuns out;
  sim::TraceSink* trace = options.sim.trace_sink;
  for (size_t i = 0; i < core_counts.size(); ++i) {
    const int64_t cores = core_counts[i];
    // A trace is of the last count's run, like the rest of the report.
    options.sim.trace_sink = i + 1 == core_counts.size() ? trace : nullptr;
    TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> m, hlo::ParseHloModule(source, file));
    TPUSIM_RETURN_IF_ERROR(RetargetReplicas(*m, cores, file, source));
    options.replicas = cores;
    options.megacore = false;  // the table counts cores: one per replica
    TPUSIM_ASSIGN_OR_RETURN(out.last, RunModule(*m, chip, options));
    out.rows.push_back(ScalingRowOf(out.last));
    if (host != nullptr) {
      TPUSIM_ASSIGN_OR_RETURN(HostLoop h, ComputeHostLoop(out.last, *host));
      ScalingRow& row = out.rows.back();
      row.host_loop = true;
      row.step_seconds = h.wall_seconds;
      row.examples_per_second = h.examples_per_second;
      row.bound = h.bound;
    }
  }
  ComputeSpeedups(out.rows);
  return out;
}

ScalingRow ScalingRowOf(const RunModuleResult& r) {
  ScalingRow row;
  row.cores = r.replicas;
  row.cycles = r.sim.cycles.value();
  row.seconds = r.sim.seconds();
  for (const sim::CoreResult& c : r.sim.cores) {
    row.collective_cycles = std::max<uint64_t>(
        row.collective_cycles, c.stalls[static_cast<int>(sim::StallCategory::kIciBound)]);
  }
  row.check_performed = r.check.performed;
  row.check_passed = r.check.passed;
  return row;
}

void ComputeSpeedups(std::vector<ScalingRow>& rows) {
  if (rows.empty()) return;
  const ScalingRow& first = rows.front();
  for (ScalingRow& r : rows) {
    const double ratio = static_cast<double>(r.cores) / static_cast<double>(first.cores);
    r.efficiency =
        r.cycles == 0 ? 0 : static_cast<double>(first.cycles) / static_cast<double>(r.cycles);
    r.speedup = ratio * r.efficiency;
    if (r.host_loop && first.examples_per_second > 0) {
      r.step_speedup = r.examples_per_second / first.examples_per_second;
    }
  }
}

Json ScalingJson(const std::vector<ScalingRow>& rows) {
  Json a = Json::MakeArray();
  for (const ScalingRow& r : rows) {
    Json j;
    j["cores"] = r.cores;
    j["cycles"] = r.cycles;
    j["seconds"] = r.seconds;
    j["speedup"] = r.speedup;
    j["efficiency"] = r.efficiency;
    j["collective_cycles"] = r.collective_cycles;
    j["check"] = !r.check_performed ? "not performed" : r.check_passed ? "passed" : "FAILED";
    if (r.host_loop) {
      j["step_seconds"] = r.step_seconds;
      j["examples_per_second"] = r.examples_per_second;
      j["step_speedup"] = r.step_speedup;
      j["bound"] = r.bound;
    }
    a.push_back(std::move(j));
  }
  return a;
}

std::string ScalingText(const std::vector<ScalingRow>& rows) {
  std::string out =
      "\nscaling (weak: every replica runs the module's per-replica batch; speedup = throughput vs "
      "the first row, efficiency = speedup / (cores / first cores))\n";
  out += fmt::format("  {:>6} {:>14} {:>12} {:>9} {:>11} {:>18} {:>14}\n", "cores", "cycles",
                     "seconds", "speedup", "efficiency", "collective cycles", "check");
  for (const ScalingRow& r : rows) {
    out += fmt::format("  {:>6} {:>14} {:>12.4g} {:>9.3f} {:>10.1f}% {:>18} {:>14}\n", r.cores,
                       r.cycles, r.seconds, r.speedup, 100 * r.efficiency, r.collective_cycles,
                       !r.check_performed ? "not performed"
                       : r.check_passed   ? "passed"
                                          : "FAILED");
  }
  if (rows.empty() || !rows.front().host_loop) return out;
  out +=
      "\nscaling with the host loop (a step = max(host CPU, PCIe, device), pipelined; speedup = "
      "examples/s vs the first row)\n";
  out += fmt::format("  {:>6} {:>14} {:>14} {:>9} {:>10}\n", "cores", "s/step", "examples/s",
                     "speedup", "bound");
  for (const ScalingRow& r : rows) {
    out += fmt::format("  {:>6} {:>14.4g} {:>14.4g} {:>9.3f} {:>10}\n", r.cores, r.step_seconds,
                       r.examples_per_second, r.step_speedup, r.bound);
  }
  return out;
}

}  // namespace tpusim::driver
