#include "config/derived.h"

#include <fmt/format.h>

#include "config/schema.h"

namespace tpusim::config {

double ChipConfig::PeakBf16FlopsPerCore() const {
  if (!core.mxu.bf16) return 0;
  // One MAC = 2 FLOP per PE per cycle (DESIGN.md §2: peak = cores * mxus * rows * cols * 2 *
  // clock).
  return static_cast<double>(core.mxu.count * core.mxu.rows * core.mxu.cols) * 2.0 * clock_hz;
}

double ChipConfig::PeakInt8OpsPerCore() const {
  return static_cast<double>(core.mxu.count * core.mxu.rows * core.mxu.cols) * 2.0 * clock_hz *
         static_cast<double>(core.mxu.int8_rate);
}

DerivedFigures Derive(const ChipConfig& c) {
  DerivedFigures d;
  d.chips = c.system.chips;
  d.tensorcores_per_chip = c.tensorcores;
  d.total_cores = c.total_cores();
  d.clock_hz = c.clock_hz;
  const double cores = static_cast<double>(c.tensorcores);
  d.peak_bf16_flops_per_s_per_core = c.PeakBf16FlopsPerCore();
  d.peak_bf16_flops_per_s_per_chip = d.peak_bf16_flops_per_s_per_core * cores;
  d.peak_bf16_flops_per_s = d.peak_bf16_flops_per_s_per_chip * static_cast<double>(c.system.chips);
  d.peak_int8_ops_per_s_per_chip = c.PeakInt8OpsPerCore() * cores;
  d.peak_int8_ops_per_s = d.peak_int8_ops_per_s_per_chip * static_cast<double>(c.system.chips);
  d.hbm_bandwidth_bytes_per_s_per_chip = c.hbm.bandwidth_bytes_per_s;
  d.hbm_bytes_per_cycle_per_chip = c.HbmBytesPerCycle();
  d.hbm_bytes_per_cycle_per_core = c.HbmBytesPerCyclePerCore();
  d.vmem_bytes_per_core = c.core.vmem_bytes;
  double peak = d.peak_bf16_flops_per_s_per_chip > 0 ? d.peak_bf16_flops_per_s_per_chip
                                                     : d.peak_int8_ops_per_s_per_chip;
  d.ridge_flops_per_byte = peak / c.hbm.bandwidth_bytes_per_s;
  d.ici_link_bandwidth_bytes_per_s = c.system.ici_link_bandwidth_bytes_per_s;
  d.ici_bandwidth_bytes_per_s_per_chip = c.system.ici_link_bandwidth_bytes_per_s *
                                         static_cast<double>(c.system.ici_links_per_chip) * 2.0;
  return d;
}

Json DerivedToJson(const ChipConfig& c, const DerivedFigures& d) {
  Json j = Json::MakeObject();
  j["name"] = c.name;
  j["config_path"] = c.source_path;
  j["chips"] = d.chips;
  j["tensorcores_per_chip"] = d.tensorcores_per_chip;
  j["total_cores"] = d.total_cores;
  j["clock_hz"] = d.clock_hz;
  j["mxu"] = Json::Object{{"count_per_core", c.core.mxu.count},
                          {"rows", c.core.mxu.rows},
                          {"cols", c.core.mxu.cols},
                          {"bf16", c.core.mxu.bf16},
                          {"int8_rate", c.core.mxu.int8_rate}};
  // The headline peak is bf16, or int8 on a chip without bf16 (TPU v1).
  const bool bf16 = c.core.mxu.bf16;
  j["peak_dtype"] = bf16 ? "bf16" : "int8";
  j["peak_flops_per_s_per_core"] = bf16 ? d.peak_bf16_flops_per_s_per_core : c.PeakInt8OpsPerCore();
  j["peak_flops_per_s_per_chip"] =
      bf16 ? d.peak_bf16_flops_per_s_per_chip : d.peak_int8_ops_per_s_per_chip;
  j["peak_flops_per_s"] = bf16 ? d.peak_bf16_flops_per_s : d.peak_int8_ops_per_s;
  j["peak_bf16_flops_per_s_per_chip"] = d.peak_bf16_flops_per_s_per_chip;
  j["peak_int8_ops_per_s_per_chip"] = d.peak_int8_ops_per_s_per_chip;
  j["peak_int8_ops_per_s"] = d.peak_int8_ops_per_s;
  j["hbm_bandwidth_bytes_per_s_per_chip"] = d.hbm_bandwidth_bytes_per_s_per_chip;
  j["hbm_bytes_per_cycle_per_chip"] = d.hbm_bytes_per_cycle_per_chip;
  j["hbm_bytes_per_cycle_per_core"] = d.hbm_bytes_per_cycle_per_core;
  j["hbm_capacity_bytes_per_chip"] = c.hbm.capacity_bytes;
  j["hbm_shared_by_cores"] = c.hbm.shared_by_cores;
  j["vmem_bytes_per_core"] = d.vmem_bytes_per_core;
  j["ridge_flops_per_byte"] = d.ridge_flops_per_byte;
  j["topology"] = TopologyName(c.system.topology);
  j["ici_links_per_chip"] = c.system.ici_links_per_chip;
  j["ici_link_bandwidth_bytes_per_s"] = d.ici_link_bandwidth_bytes_per_s;
  j["ici_bandwidth_bytes_per_s_per_chip"] = d.ici_bandwidth_bytes_per_s_per_chip;
  j["ici_hop_latency_cycles"] = c.system.ici_hop_latency_cycles;
  return j;
}

std::string DerivedToText(const ChipConfig& c, const DerivedFigures& d) {
  std::string out;
  auto row = [&](std::string_view k, const std::string& v) {
    out += fmt::format("  {:<34} {}\n", k, v);
  };
  out += fmt::format("{} ({})\n", c.name, c.source_path);
  row("chips x TensorCores",
      fmt::format("{} x {} = {} cores", d.chips, d.tensorcores_per_chip, d.total_cores));
  row("clock", fmt::format("{:.4g} GHz", d.clock_hz / 1e9));
  row("MXUs per core",
      fmt::format("{} x {}x{}", c.core.mxu.count, c.core.mxu.rows, c.core.mxu.cols));
  if (c.core.mxu.bf16) {
    row("peak bf16 per core",
        fmt::format("{:.2f} TFLOP/s", d.peak_bf16_flops_per_s_per_core / 1e12));
    row("peak bf16 per chip",
        fmt::format("{:.2f} TFLOP/s", d.peak_bf16_flops_per_s_per_chip / 1e12));
    row("peak bf16, whole slice", fmt::format("{:.2f} TFLOP/s", d.peak_bf16_flops_per_s / 1e12));
  }
  if (c.core.mxu.int8_rate > 0) {
    row("peak int8 per chip", fmt::format("{:.2f} TOP/s", d.peak_int8_ops_per_s_per_chip / 1e12));
    row("peak int8, whole slice", fmt::format("{:.2f} TOP/s", d.peak_int8_ops_per_s / 1e12));
  }
  row("HBM per chip",
      fmt::format("{:.1f} GiB, {:.1f} GB/s ({})",
                  static_cast<double>(c.hbm.capacity_bytes) / (1 << 30),
                  d.hbm_bandwidth_bytes_per_s_per_chip / 1e9,
                  c.hbm.shared_by_cores ? "shared by the cores" : "split per core"));
  row("HBM bytes/cycle",
      fmt::format("{:.2f} per chip, {:.2f} per core", d.hbm_bytes_per_cycle_per_chip,
                  d.hbm_bytes_per_cycle_per_core));
  row("VMEM per core", fmt::format("{:.1f} MiB, {} bytes/cycle",
                                   static_cast<double>(d.vmem_bytes_per_core) / (1 << 20),
                                   c.core.vmem_bytes_per_cycle));
  row("ridge point", fmt::format("{:.1f} FLOP per HBM byte", d.ridge_flops_per_byte));
  if (c.system.ici_links_per_chip > 0) {
    row("ICI", fmt::format("{} links x {:.1f} GB/s per direction ({}), {} cycles/hop",
                           c.system.ici_links_per_chip, d.ici_link_bandwidth_bytes_per_s / 1e9,
                           TopologyName(c.system.topology), c.system.ici_hop_latency_cycles));
  }
  return out;
}

}  // namespace tpusim::config
