// MemorySizes: the few chip figures the ISA layer needs (memory capacities, MXU shape, core count),
// taken from a config::ChipConfig so the verifier and the interpreter do not depend on timing keys.
#pragma once

#include <cstdint>

#include "config/chip_config.h"

namespace tpusim::isa {

struct MemorySizes {
  int64_t cores = 1;                      // chips * tensorcores: global core ids 0..cores-1
  int64_t tensorcores_per_chip = 1;       // chip.tensorcores
  int64_t vmem_bytes = 0;                 // core.vmem.capacity_bytes
  int64_t smem_bytes = 0;                 // core.smem.capacity_bytes
  int64_t hbm_bytes_per_chip = 0;         // chip.hbm.capacity_bytes
  bool hbm_shared_by_cores = true;        // chip.hbm.shared_by_cores (false: each core owns 1/n)
  int64_t mxu_count = 1;                  // core.mxu.count
  int64_t mxu_rows = 128;                 // core.mxu.rows (R, max K)
  int64_t mxu_cols = 128;                 // core.mxu.cols (C, max N; accumulator row width)
  int64_t accumulator_rows = 0;           // core.mxu.accumulator_rows (per MXU)
  int64_t host_bytes = int64_t{1} << 40;  // host memory modelled (no config key; 1 TiB, sparse)

  /// HBM bytes one core addresses: the chip's HBM when shared, else its 1/tensorcores share.
  int64_t hbm_bytes_per_core() const {
    return hbm_shared_by_cores ? hbm_bytes_per_chip : hbm_bytes_per_chip / tensorcores_per_chip;
  }
  static MemorySizes FromChipConfig(const config::ChipConfig& c);
};

}  // namespace tpusim::isa
