// ChipConfig: one chip (or slice of chips) as read from configs/*.yaml, parsed once and shared by
// the compiler (sizes to tile and plan for) and the simulator (timings). Every field has a unit;
// the YAML key of each field is written beside it, and each initializer is the schema's default
// (config/schema.cc; test ConfigSchema.EveryDefaultIsTheStructsDefault), so a config built in code
// starts from the same values as a YAML file that leaves the key out. Published figures and their
// sources are in the YAML files (configs/) and ../shared/reference/tpu-specs.md; `tpusim config
// schema` prints every key with its unit, range, default and description (config/schema.cc is the
// one table of keys).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tpusim::config {

/// The MXU's input element type (what the systolic array multiplies natively).
enum class MxuDtype { kBF16, kInt8 };

/// A weight-stationary systolic array (MXU). `core.mxu.*`.
struct MxuConfig {
  int64_t count = 1;      // core.mxu.count: MXUs per TensorCore
  int64_t rows = 128;     // core.mxu.rows: R, PE rows = the K (contracting) extent of a weight tile
  int64_t cols = 128;     // core.mxu.cols: C, PE columns = the N (output) extent of a weight tile
  bool bf16 = true;       // core.mxu.bf16: multiplies bf16 (accumulates f32)
  int64_t int8_rate = 0;  // core.mxu.int8_rate: int8 MACs per PE per cycle (0: no int8 path)
  int64_t weight_buffers = 2;  // core.mxu.weight_buffers: 1 = no shadow tile, 2 = double buffered
  int64_t weight_load_cycles_per_row =
      1;                           // core.mxu.weight_load_cycles_per_row: cycles to shift one row
  int64_t pop_latency_cycles = 8;  // core.mxu.pop_latency_cycles: accumulator -> VPU/VMEM extra
  int64_t accumulator_rows =
      0;  // core.mxu.accumulator_rows: rows of `cols` f32/s32 accumulators per MXU
};

/// The vector unit. `core.vpu.*`.
struct VpuConfig {
  int64_t lanes = 128;             // core.vpu.lanes
  int64_t sublanes = 8;            // core.vpu.sublanes
  int64_t alu_latency_cycles = 2;  // core.vpu.alu_latency_cycles: add/mul/max/compare/select
  int64_t transcendental_latency_cycles =
      8;                                 // core.vpu.transcendental_latency_cycles: exp/log/tanh/...
  int64_t divide_latency_cycles = 8;     // core.vpu.divide_latency_cycles: divide, sqrt, rsqrt
  int64_t transpose_latency_cycles = 8;  // core.vpu.transpose_latency_cycles: XLU 8x128 transpose
  int64_t ops_per_cycle = 1;  // core.vpu.ops_per_cycle: 8x128 vector ops issued per cycle
  int64_t ops_per_64bit_element = 2;  // core.vpu.ops_per_64bit_element: 32-bit ops per s64/u64 op
  int64_t ops_per_f64_element = 20;  // core.vpu.ops_per_f64_element: 32-bit ops per f64 op
};

/// One TensorCore. `core.*`.
struct CoreConfig {
  MxuConfig mxu;
  VpuConfig vpu;
  int64_t vmem_bytes = 0;            // core.vmem.capacity_bytes
  int64_t vmem_bytes_per_cycle = 0;  // core.vmem.bytes_per_cycle: VMEM port bandwidth
  int64_t vmem_scoped_limit_bytes = 0;  // core.vmem.scoped_limit_bytes: VMEM per kernel (0 = all)
  /// VMEM bytes one kernel may use: core.vmem.scoped_limit_bytes when set and below the capacity,
  /// else the capacity. The rest holds buffers kept between kernels.
  int64_t KernelVmemBytes() const {
    return vmem_scoped_limit_bytes > 0 && vmem_scoped_limit_bytes < vmem_bytes
               ? vmem_scoped_limit_bytes
               : vmem_bytes;
  }
  int64_t smem_bytes = 0;            // core.smem.capacity_bytes
  int64_t dma_engines = 4;           // core.dma.engines: concurrent DMA streams
  int64_t dma_issue_cycles = 1;      // core.dma.issue_cycles: cycles to issue one descriptor
  int64_t unit_queue_depth = 16;     // core.unit_queue_depth: commands queued per unit
};

/// HBM (or TPU v1's DDR3 weight memory). `chip.hbm.*`.
struct HbmConfig {
  int64_t capacity_bytes = 0;        // chip.hbm.capacity_bytes (per chip)
  double bandwidth_bytes_per_s = 0;  // chip.hbm.bandwidth_bytes_per_s (per chip)
  int64_t latency_cycles = 150;      // chip.hbm.latency_cycles: first byte of a transfer
  bool shared_by_cores = true;       // chip.hbm.shared_by_cores: false = each core owns 1/n (v2/v3)
  int64_t tile_min_bytes = 0;       // chip.hbm.tile_min_bytes: smallest HBM tile; 0 = untiled
};

/// Interconnect between chips. `system.*`.
enum class Topology { kSingle, kRing, kTorus2D, kTorus3D };
struct SystemConfig {
  int64_t chips = 1;                      // system.chips
  Topology topology = Topology::kSingle;  // system.topology: single | ring | torus2d | torus3d
  std::vector<int64_t> shape;      // system.shape: chips per torus dimension, product = chips
  int64_t ici_links_per_chip = 0;  // system.ici.links_per_chip
  double ici_link_bandwidth_bytes_per_s =
      0;                               // system.ici.link_bandwidth_bytes_per_s (one direction)
  int64_t ici_hop_latency_cycles = 0;  // system.ici.hop_latency_cycles
  bool ici_dimension_rings = true;     // system.ici.dimension_rings: all-reduce ring per dimension
};

/// The host machine driving the chips: the host side of a training loop (driver/host_loop.h).
/// `host.*`.
struct HostConfig {
  int64_t chips_per_host = 4;            // host.chips_per_host: chips one host drives
  int64_t cpu_cores = 96;                // host.cpu_cores: CPU cores per host
  double step_overhead_seconds = 1e-3;   // host.step_overhead_seconds: per step, per replica
  double input_seconds_per_example = 1e-5;  // host.input_seconds_per_example: input pipeline
  double transfer_latency_seconds = 1e-5;  // host.transfer_latency_seconds: per PCIe transfer
};

/// A chip (and the slice it sits in). Top level of a config file.
struct ChipConfig {
  std::string name;                    // name
  std::string source_path;             // file it was read from (not a key)
  std::vector<std::string> overrides;  // the --set KEY=VALUE applied on top, in order (not a key)
  int64_t tensorcores = 1;             // chip.tensorcores: TensorCores per chip
  double clock_hz = 0;                 // chip.clock_hz
  double host_bandwidth_bytes_per_s = 16e9;  // chip.host.bandwidth_bytes_per_s: PCIe, one way
  HbmConfig hbm;
  CoreConfig core;
  SystemConfig system;
  HostConfig host;

  // Derived figures (config/derived.cc); all are pure functions of the fields above.
  int64_t total_cores() const { return system.chips * tensorcores; }
  /// Peak bf16 FLOP/s of one TensorCore: mxu.count * rows * cols * 2 * clock_hz (0 without bf16).
  double PeakBf16FlopsPerCore() const;
  /// Peak int8 OP/s of one TensorCore: the bf16 figure * int8_rate (0 without an int8 path).
  double PeakInt8OpsPerCore() const;
  /// HBM bytes per core-clock cycle for the whole chip.
  double HbmBytesPerCycle() const { return hbm.bandwidth_bytes_per_s / clock_hz; }
  /// A TensorCore's even share of it, HbmBytesPerCycle() / tensorcores: its own HBM path when
  /// hbm.shared_by_cores is false (the simulator's per-core HBM resource), its fair share of the
  /// chip's when true.
  double HbmBytesPerCyclePerCore() const {
    return HbmBytesPerCycle() / static_cast<double>(std::max<int64_t>(1, tensorcores));
  }
  /// ICI bytes per core-clock cycle of one link in one direction.
  double IciLinkBytesPerCycle() const { return system.ici_link_bandwidth_bytes_per_s / clock_hz; }
};

}  // namespace tpusim::config
