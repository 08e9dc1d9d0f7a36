#include "isa/memory_sizes.h"

namespace tpusim::isa {

MemorySizes MemorySizes::FromChipConfig(const config::ChipConfig& c) {
  MemorySizes s;
  s.cores = c.total_cores();
  s.tensorcores_per_chip = c.tensorcores;
  s.vmem_bytes = c.core.vmem_bytes;
  s.smem_bytes = c.core.smem_bytes;
  s.hbm_bytes_per_chip = c.hbm.capacity_bytes;
  s.hbm_shared_by_cores = c.hbm.shared_by_cores;
  s.mxu_count = c.core.mxu.count;
  s.mxu_rows = c.core.mxu.rows;
  s.mxu_cols = c.core.mxu.cols;
  s.accumulator_rows = c.core.mxu.accumulator_rows;
  return s;
}

}  // namespace tpusim::isa
