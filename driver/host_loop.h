// The host side of a training loop: `tpusim run MODEL --steps N --host-input` (DESIGN.md "Host").
//
// A step as PyTorch/XLA (xmp.spawn, ParallelLoader, xm.optimizer_step) or a JAX input pipeline runs
// it uses three resources, each modelled from config keys (configs/, docs/config.md `host.*`):
//
//  1. host CPU: every replica has a host process doing host.step_overhead_seconds of work per step
//     (the Python step, tracing and launching the graph, mark_step) plus
//     host.input_seconds_per_example per example of its batch (the loader's collate and convert).
//     One host drives host.chips_per_host chips; its host.cpu_cores run that host's replica
//     processes, so with more processes than cores they share them:
//       host_cpu = (overhead + examples * per_example) * max(1, replicas_per_host / cpu_cores).
//  2. PCIe: the step's input batch crosses each chip's host link into HBM (infeed) and the results
//     not kept on the device (the loss) come back (outfeed), at chip.host.bandwidth_bytes_per_s
//     per direction plus host.transfer_latency_seconds per transfer; chips transfer in parallel
//     over their own links, so the stage is the busiest chip's infeed + outfeed.
//  3. device: the simulated step (cycles / clock_hz; all cores at once, collectives included).
//
// The loader prefetches (the infeed of step i+1 runs during step i) and the device runs
// asynchronously (the host prepares step i+1 while the device runs step i), so the three stages
// form a pipeline: N steps take the sum of the stages (the first step) plus (N - 1) times the
// largest stage. Per step (steady state): wall = max(stages); host = host_cpu + pcie; overlap =
// device + host - wall; bound = the largest stage.
//
// Which parameters are the input batch: the numbers given (--host-input-params), else every
// parameter leaf whose element type and dims match no output leaf of the same device (a training
// step returns its updated weights and optimizer state with their parameters' shapes, so what is
// left is the batch). Outfeed: the output leaves that match no parameter leaf (the loss, metrics).
// The examples of a step: the leading dimension of the first input leaf — the next one when every
// parameter leaf leads with a dimension of 1 (a JAX pmap body: each device gets its [1, ...] slice
// of every argument).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "driver/run_module.h"

namespace tpusim::driver {

struct HostLoopOptions {
  int64_t steps = 1;                      // N >= 1
  bool infeed = true;                     // --host-input: the batch crosses PCIe every step
  std::vector<int64_t> input_parameters;  // empty: chosen by shape (see the file comment)
};

struct HostLoop {
  int64_t steps = 1;
  int64_t replicas = 1;
  int64_t hosts = 1;
  int64_t examples_per_replica = 0;      // batch dim of the first input leaf (0: no input)
  int64_t infeed_bytes_per_replica = 0;  // bytes
  int64_t outfeed_bytes_per_replica = 0;
  std::vector<int64_t> input_parameters;  // parameter numbers fed from the host
  double device_seconds = 0;              // per step: the simulated step
  double host_cpu_seconds = 0;            // per step: the host CPU stage
  double pcie_seconds = 0;                // per step: infeed + outfeed of the busiest chip
  double host_seconds = 0;                // host_cpu + pcie
  double wall_seconds = 0;                // per step in steady state: max of the three stages
  double overlap_seconds = 0;             // device + host - wall
  double total_seconds = 0;               // the N steps
  double examples_per_second = 0;         // replicas * examples_per_replica / wall
  std::string bound;                      // "host CPU", "PCIe" or "device"
};

/// The host loop of a finished run. InvalidArgument when steps < 1 or a parameter number is out
/// of range.
StatusOr<HostLoop> ComputeHostLoop(const RunModuleResult& r, const HostLoopOptions& options);

/// {"steps", "replicas", "hosts", "examples_per_replica", "infeed_bytes_per_replica",
/// "outfeed_bytes_per_replica", "input_parameters", "per_step" {"device_seconds",
/// "host_cpu_seconds", "pcie_seconds", "host_seconds", "wall_seconds", "overlap_seconds"},
/// "total_seconds", "examples_per_second", "bound", "model" (the config keys used)}.
Json HostLoopJson(const HostLoop& h, const config::ChipConfig& c);

/// The readable table.
std::string HostLoopText(const HostLoop& h);

}  // namespace tpusim::driver
