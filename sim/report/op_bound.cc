#include "sim/report/op_bound.h"

#include <array>
#include <cstdint>

#include "isa/opcode.h"

namespace tpusim::sim {
namespace {

constexpr int kNumBounds = 7;
using CyclesByBound = std::array<uint64_t, kNumBounds>;

// The class of an instruction of `resource` (op_bound.h): the scalar unit's time counts as sync.
OpBound ClassOf(isa::Resource resource) {
  switch (resource) {
    case isa::Resource::kMxu:
      return OpBound::kMxu;
    case isa::Resource::kHbm:
      return OpBound::kHbm;
    case isa::Resource::kHost:
      return OpBound::kHost;
    case isa::Resource::kIci:
      return OpBound::kIci;
    case isa::Resource::kVpu:
      return OpBound::kVpu;
    case isa::Resource::kSync:
    case isa::Resource::kScalar:
      break;
  }
  return OpBound::kSync;
}

// Per HLO tag: retirement cycles charged to each class, summed over cores.
std::vector<CyclesByBound> CyclesByClass(const SimResult& sim, const isa::Program& program) {
  std::vector<CyclesByBound> out(program.hlo_names.size());
  for (const CoreResult& core : sim.cores) {
    if (core.core >= program.num_cores()) continue;
    for (size_t tag = 0; tag < core.ops.size() && tag < out.size(); ++tag) {
      for (size_t r = 0; r < isa::kResourceCount; ++r) {
        out[tag][static_cast<int>(ClassOf(static_cast<isa::Resource>(r)))] +=
            core.ops[tag].cycles[r];
      }
    }
  }
  return out;
}

OpBoundShare BoundOf(const CyclesByBound& by_class) {
  uint64_t total = 0, best = 0;
  OpBound bound = OpBound::kNone;
  // Ties go to the first listed: MXU, HBM, VPU, ICI, host.
  for (OpBound b : {OpBound::kMxu, OpBound::kHbm, OpBound::kVpu, OpBound::kIci, OpBound::kHost}) {
    const uint64_t c = by_class[static_cast<int>(b)];
    total += c;
    if (c > best) best = c, bound = b;
  }
  const uint64_t sync = by_class[static_cast<int>(OpBound::kSync)];
  if (bound == OpBound::kNone && sync > 0) bound = OpBound::kSync, best = sync;
  total += sync;
  return {bound, total > 0 ? static_cast<double>(best) / static_cast<double>(total) : 0};
}

}  // namespace

const char* OpBoundName(OpBound b) {
  switch (b) {
    case OpBound::kMxu:
      return "MXU";
    case OpBound::kVpu:
      return "VPU";
    case OpBound::kHbm:
      return "HBM";
    case OpBound::kIci:
      return "ICI";
    case OpBound::kHost:
      return "host";
    case OpBound::kSync:
      return "sync";
    case OpBound::kNone:
      break;
  }
  return "-";
}

std::vector<OpBoundShare> OpBounds(const SimResult& result, const isa::Program& program) {
  std::vector<OpBoundShare> out;
  for (const CyclesByBound& c : CyclesByClass(result, program)) out.push_back(BoundOf(c));
  return out;
}

}  // namespace tpusim::sim
