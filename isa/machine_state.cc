#include "isa/machine_state.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/check.h"
#include "common/saturating.h"

namespace tpusim::isa {

CoreState::CoreState(const MemorySizes& s, int id)
    : vmem(fmt::format("VMEM of core {}", id), static_cast<uint64_t>(s.vmem_bytes)),
      smem(fmt::format("SMEM of core {}", id), static_cast<uint64_t>(s.smem_bytes)),
      flags(kNumSyncFlags, 0),
      mxus(static_cast<size_t>(std::max<int64_t>(s.mxu_count, 0))) {
  for (MxuState& m : mxus) {
    m.acc = AccumulatorMemory(std::max<int64_t>(s.accumulator_rows, 0),
                              std::max<int64_t>(s.mxu_cols, 0));
  }
}

StatusOr<MachineState> MachineState::Create(const MemorySizes& sizes, int num_cores) {
  if (num_cores > sizes.cores) {
    return InvalidArgument(
        fmt::format("the program has {} cores but the system has only {}", num_cores, sizes.cores));
  }
  MachineState s;
  s.sizes = sizes;
  s.cores.reserve(static_cast<size_t>(num_cores));
  for (int c = 0; c < num_cores; ++c) s.cores.emplace_back(sizes, c);
  const int n_hbm = num_cores == 0 ? 0 : s.HbmIndex(num_cores - 1) + 1;
  for (int h = 0; h < n_hbm; ++h) {
    s.hbm.emplace_back(sizes.hbm_shared_by_cores ? fmt::format("HBM of chip {}", h)
                                                 : fmt::format("HBM of core {}", h),
                       static_cast<uint64_t>(sizes.hbm_bytes_per_core()));
  }
  s.host = SparseMemory("host memory", static_cast<uint64_t>(sizes.host_bytes));
  return s;
}

Status MachineState::WriteSegments(const std::vector<DataSegment>& segments,
                                   std::string_view what) {
  for (size_t i = 0; i < segments.size(); ++i) {
    const DataSegment& d = segments[i];
    if (d.space == MemSpace::kAcc ||
        (d.space != MemSpace::kHost && (d.core < 0 || d.core >= num_cores()))) {
      return InvalidArgument(
          fmt::format("{} {}: no {} memory of core {}", what, i, Name(d.space), d.core));
    }
    Status st = memory(d.space, d.core).Write(d.address, d.bytes.data(), d.bytes.size());
    if (!st.ok()) return InvalidArgument(fmt::format("{} {}: {}", what, i, st.message()));
  }
  return OkStatus();
}

SparseMemory& MachineState::memory(MemSpace space, int core) {
  switch (space) {
    case MemSpace::kHbm:
      return hbm[HbmIndex(core)];
    case MemSpace::kVmem:
      return cores[core].vmem;
    case MemSpace::kSmem:
      return cores[core].smem;
    case MemSpace::kHost:
      return host;
    case MemSpace::kAcc:
      break;
  }
  TPUSIM_CHECK(false) << "MachineState::memory: the accumulator space is not byte-addressed";
  return host;
}

Status MachineState::BumpFlag(int core, uint64_t flag) {
  return AddToFlag(cores[core].flags[flag], 1, flag);
}

Status AddToFlag(uint32_t& word, uint64_t value, uint64_t flag) {
  const uint64_t sum = SaturatingAdd(word, value);
  if (sum > 0xFFFFFFFFull) return InvalidArgument(fmt::format("flag {} overflows 2^32-1", flag));
  word = static_cast<uint32_t>(sum);
  return OkStatus();
}

}  // namespace tpusim::isa
