// The figures `tpusim config show` prints, derived from a ChipConfig. Each is a product of config
// fields; the formula is written beside each field, so a reader can redo it by hand.
#pragma once

#include <string>

#include "common/json.h"
#include "config/chip_config.h"

namespace tpusim::config {

struct DerivedFigures {
  int64_t chips = 0;
  int64_t tensorcores_per_chip = 0;
  int64_t total_cores = 0;  // chips * tensorcores_per_chip
  double clock_hz = 0;
  double peak_bf16_flops_per_s_per_core = 0;  // mxu.count * rows * cols * 2 * clock_hz (0: no bf16)
  double peak_bf16_flops_per_s_per_chip = 0;  // per core * tensorcores
  double peak_bf16_flops_per_s = 0;           // per chip * chips
  double peak_int8_ops_per_s_per_chip = 0;    // per-core bf16 figure * int8_rate * tensorcores
  double peak_int8_ops_per_s = 0;             // per chip * chips
  double hbm_bandwidth_bytes_per_s_per_chip = 0;
  double hbm_bytes_per_cycle_per_chip = 0;  // bandwidth / clock
  double hbm_bytes_per_cycle_per_core = 0;  // per chip, / tensorcores unless shared (fair share)
  int64_t vmem_bytes_per_core = 0;
  /// Roofline ridge point: peak FLOP/s per chip / HBM bytes/s per chip (FLOP per HBM byte). Uses
  /// the bf16 peak, or the int8 one on a chip with no bf16 path (TPU v1).
  double ridge_flops_per_byte = 0;
  double ici_link_bandwidth_bytes_per_s = 0;      // one link, one direction
  double ici_bandwidth_bytes_per_s_per_chip = 0;  // links_per_chip * link * 2 directions
};

DerivedFigures Derive(const ChipConfig& c);
/// JSON with keys `name`, `chips`, `tensorcores_per_chip`, `clock_hz`, `peak_flops_per_s_per_chip`,
/// `peak_flops_per_s`, `hbm_bandwidth_bytes_per_s_per_chip`, ... (docs/config.md lists them all).
Json DerivedToJson(const ChipConfig& c, const DerivedFigures& d);
/// A readable table for the terminal.
std::string DerivedToText(const ChipConfig& c, const DerivedFigures& d);

}  // namespace tpusim::config
