#include "driver/host_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace tpusim::driver {
namespace {

using LeafKey = std::pair<int, std::vector<int64_t>>;  // element type, dims

LeafKey KeyOf(const compiler::BufferPlacement& p) {
  return {static_cast<int>(p.shape.element_type()), p.shape.dimensions()};
}

// Per device: which parameter leaves are the batch and which output leaves go back to the host
// (see the header's file comment). Returns {input leaves, outfeed leaves} of core 0.
std::pair<std::vector<const compiler::BufferPlacement*>,
          std::vector<const compiler::BufferPlacement*>>
SplitLeaves(const compiler::CompiledModule& m, const std::vector<int64_t>& chosen) {
  std::multiset<LeafKey> params, outputs;
  for (const auto& p : m.parameters) {
    if (p.core == 0) params.insert(KeyOf(p));
  }
  for (const auto& o : m.outputs) {
    if (o.core == 0) outputs.insert(KeyOf(o));
  }
  std::vector<const compiler::BufferPlacement*> in, out;
  std::multiset<LeafKey> unmatched_outputs = outputs;
  for (const auto& p : m.parameters) {
    if (p.core != 0) continue;
    if (!chosen.empty()) {
      if (std::find(chosen.begin(), chosen.end(), p.parameter_number) != chosen.end()) {
        in.push_back(&p);
      }
      continue;
    }
    auto it = unmatched_outputs.find(KeyOf(p));
    if (it == unmatched_outputs.end()) {
      in.push_back(&p);
    } else {
      unmatched_outputs.erase(it);
    }
  }
  std::multiset<LeafKey> unmatched_params = params;
  for (const auto& o : m.outputs) {
    if (o.core != 0) continue;
    auto it = unmatched_params.find(KeyOf(o));
    if (it == unmatched_params.end()) {
      out.push_back(&o);
    } else {
      unmatched_params.erase(it);
    }
  }
  return {in, out};
}

// True if every parameter leaf of core 0 leads with a dimension of 1: JAX's pmap gives each device
// its [1, ...] slice of every argument (the mapped axis), so the batch is the next dimension.
bool MappedAxis(const compiler::CompiledModule& m) {
  bool any = false;
  for (const auto& p : m.parameters) {
    if (p.core != 0) continue;
    const std::vector<int64_t>& dims = p.shape.dimensions();
    if (dims.empty() || dims.front() != 1) return false;
    any = true;
  }
  return any;
}

}  // namespace

StatusOr<HostLoop> ComputeHostLoop(const RunModuleResult& r, const HostLoopOptions& options) {
  if (options.steps < 1) {
    return InvalidArgument(fmt::format("--steps: expected at least 1, got {}", options.steps));
  }
  int64_t params = 0;
  for (const auto& p : r.compiled.parameters) params = std::max(params, p.parameter_number + 1);
  for (int64_t n : options.input_parameters) {
    if (n < 0 || n >= params) {
      return InvalidArgument(fmt::format(
          "--host-input-params: parameter {} does not exist (the module has {})", n, params));
    }
  }
  const config::ChipConfig& c = r.config;
  HostLoop h;
  h.steps = options.steps;
  h.replicas = std::max<int64_t>(1, r.replicas);
  auto [in, out] = SplitLeaves(r.compiled, options.input_parameters);
  if (options.infeed) {
    std::set<int64_t> numbers;
    for (const auto* p : in) {
      h.infeed_bytes_per_replica += p->bytes;
      numbers.insert(p->parameter_number);
    }
    h.input_parameters.assign(numbers.begin(), numbers.end());
    if (!in.empty() && !in.front()->shape.dimensions().empty()) {
      const std::vector<int64_t>& dims = in.front()->shape.dimensions();
      h.examples_per_replica = MappedAxis(r.compiled) && dims.size() > 1 ? dims[1] : dims[0];
    }
  }
  for (const auto* o : out) h.outfeed_bytes_per_replica += o->bytes;

  // Devices per chip: a device is cores_per_device TensorCores (megacore) of one chip.
  const int64_t cores_per_device = std::max<int64_t>(1, r.compiled.cores_per_device);
  const int64_t devices_per_chip = std::max<int64_t>(1, c.tensorcores / cores_per_device);
  const int64_t chips_used = (h.replicas + devices_per_chip - 1) / devices_per_chip;
  const int64_t per_chip = std::min(h.replicas, devices_per_chip);
  h.hosts = (chips_used + c.host.chips_per_host - 1) / c.host.chips_per_host;
  const double replicas_per_host =
      static_cast<double>(h.replicas) / static_cast<double>(std::max<int64_t>(1, h.hosts));

  const int64_t transfers =
      per_chip * static_cast<int64_t>((options.infeed ? in.size() : 0) + out.size());
  h.pcie_seconds =
      static_cast<double>(transfers) * c.host.transfer_latency_seconds +
      static_cast<double>(per_chip * (h.infeed_bytes_per_replica + h.outfeed_bytes_per_replica)) /
          c.host_bandwidth_bytes_per_s;
  const double per_process =
      c.host.step_overhead_seconds +
      static_cast<double>(h.examples_per_replica) * c.host.input_seconds_per_example;
  h.host_cpu_seconds =
      per_process * std::max(1.0, replicas_per_host / static_cast<double>(c.host.cpu_cores));
  h.device_seconds = r.sim.seconds();
  h.host_seconds = h.host_cpu_seconds + h.pcie_seconds;
  h.wall_seconds = std::max({h.host_cpu_seconds, h.pcie_seconds, h.device_seconds});
  h.bound = h.wall_seconds == h.device_seconds ? "device"
            : h.wall_seconds == h.pcie_seconds ? "PCIe"
                                               : "host CPU";
  h.overlap_seconds = h.device_seconds + h.host_seconds - h.wall_seconds;
  h.total_seconds = h.host_cpu_seconds + h.pcie_seconds + h.device_seconds +
                    static_cast<double>(h.steps - 1) * h.wall_seconds;
  h.examples_per_second =
      h.wall_seconds > 0 ? static_cast<double>(h.replicas * h.examples_per_replica) / h.wall_seconds
                         : 0.0;
  return h;
}

Json HostLoopJson(const HostLoop& h, const config::ChipConfig& c) {
  Json::Array params;
  for (int64_t n : h.input_parameters) params.push_back(Json(n));
  Json j = Json::Object{{"steps", h.steps},
                        {"replicas", h.replicas},
                        {"hosts", h.hosts},
                        {"examples_per_replica", h.examples_per_replica},
                        {"infeed_bytes_per_replica", h.infeed_bytes_per_replica},
                        {"outfeed_bytes_per_replica", h.outfeed_bytes_per_replica},
                        {"input_parameters", Json(std::move(params))}};
  j["per_step"] =
      Json::Object{{"device_seconds", h.device_seconds}, {"host_cpu_seconds", h.host_cpu_seconds},
                   {"pcie_seconds", h.pcie_seconds},     {"host_seconds", h.host_seconds},
                   {"wall_seconds", h.wall_seconds},     {"overlap_seconds", h.overlap_seconds}};
  j["total_seconds"] = h.total_seconds;
  j["examples_per_second"] = h.examples_per_second;
  j["bound"] = h.bound;
  j["model"] = Json::Object{{"host.step_overhead_seconds", c.host.step_overhead_seconds},
                            {"host.input_seconds_per_example", c.host.input_seconds_per_example},
                            {"host.cpu_cores", c.host.cpu_cores},
                            {"host.chips_per_host", c.host.chips_per_host},
                            {"host.transfer_latency_seconds", c.host.transfer_latency_seconds},
                            {"chip.host.bandwidth_bytes_per_s", c.host_bandwidth_bytes_per_s}};
  return j;
}

std::string HostLoopText(const HostLoop& h) {
  std::string params;
  for (int64_t n : h.input_parameters) {
    if (!params.empty()) params += ',';
    params += std::to_string(n);
  }
  std::string out = fmt::format(
      "\nhost loop         {} step(s), {} replica(s) on {} host(s); infeed {} B/replica "
      "(parameters {}), outfeed {} B/replica, {} examples/replica\n",
      h.steps, h.replicas, h.hosts, h.infeed_bytes_per_replica, params.empty() ? "none" : params,
      h.outfeed_bytes_per_replica, h.examples_per_replica);
  out += fmt::format(
      "  per step        device {:.4g} s, host {:.4g} s (CPU {:.4g} s + PCIe {:.4g} s)\n",
      h.device_seconds, h.host_seconds, h.host_cpu_seconds, h.pcie_seconds);
  out += fmt::format(
      "  pipelined       {:.4g} s/step ({} bound), overlap {:.4g} s/step; {} steps {:.4g} s; "
      "{:.4g} examples/s\n",
      h.wall_seconds, h.bound, h.overlap_seconds, h.steps, h.total_seconds, h.examples_per_second);
  return out;
}

}  // namespace tpusim::driver
