#include "sim/core/machine_state.h"

#include <fmt/format.h>

#include "common/check.h"

namespace tpusim::sim {

StatusOr<MachineState> MachineState::Create(const isa::MemorySizes& sizes,
                                            const isa::Program& program) {
  MachineState s;
  s.sizes = sizes;
  const int n = program.num_cores();
  if (n > sizes.cores) {
    return InvalidArgument(
        fmt::format("the program has {} cores but the system has only {}", n, sizes.cores));
  }
  for (int c = 0; c < n; ++c) {
    s.vmem.emplace_back(fmt::format("VMEM of core {}", c), static_cast<uint64_t>(sizes.vmem_bytes));
    s.smem.emplace_back(fmt::format("SMEM of core {}", c), static_cast<uint64_t>(sizes.smem_bytes));
  }
  int n_hbm = n == 0 ? 0 : s.HbmIndex(n - 1) + 1;
  for (int h = 0; h < n_hbm; ++h) {
    s.hbm.emplace_back(sizes.hbm_shared_by_cores ? fmt::format("HBM of chip {}", h)
                                                 : fmt::format("HBM of core {}", h),
                       static_cast<uint64_t>(sizes.hbm_bytes_per_core()));
  }
  s.host = isa::SparseMemory("host memory", static_cast<uint64_t>(sizes.host_bytes));
  for (size_t i = 0; i < program.data.size(); ++i) {
    const isa::DataSegment& d = program.data[i];
    if (d.space == isa::MemSpace::kAcc ||
        (d.space != isa::MemSpace::kHost && (d.core < 0 || d.core >= n))) {
      return InvalidArgument(
          fmt::format("data segment {}: no {} memory of core {}", i, isa::Name(d.space), d.core));
    }
    Status st = s.memory(d.space, d.core).Write(d.address, d.bytes.data(), d.bytes.size());
    if (!st.ok()) return InvalidArgument(fmt::format("data segment {}: {}", i, st.message()));
  }
  return s;
}

isa::SparseMemory& MachineState::memory(isa::MemSpace space, int core) {
  switch (space) {
    case isa::MemSpace::kHbm:
      return hbm[HbmIndex(core)];
    case isa::MemSpace::kVmem:
      return vmem[core];
    case isa::MemSpace::kSmem:
      return smem[core];
    case isa::MemSpace::kHost:
      return host;
    case isa::MemSpace::kAcc:
      break;
  }
  TPUSIM_CHECK(false) << "MachineState::memory: the accumulator space is not byte-addressed";
  return host;
}

}  // namespace tpusim::sim
