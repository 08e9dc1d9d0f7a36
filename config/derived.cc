#include "config/chip_config.h"

namespace tpusim::config {

double ChipConfig::PeakBf16FlopsPerCore() const {
  if (!core.mxu.bf16) return 0;
  // One MAC = 2 FLOP per PE per cycle (DESIGN.md §2: peak = cores * mxus * rows * cols * 2 * clock).
  return static_cast<double>(core.mxu.count * core.mxu.rows * core.mxu.cols) * 2.0 * clock_hz;
}

double ChipConfig::PeakInt8OpsPerCore() const {
  return static_cast<double>(core.mxu.count * core.mxu.rows * core.mxu.cols) * 2.0 * clock_hz *
         static_cast<double>(core.mxu.int8_rate);
}

}  // namespace tpusim::config
