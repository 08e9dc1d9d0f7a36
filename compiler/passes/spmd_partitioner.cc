#include "compiler/passes/spmd_partitioner.h"

#include <fmt/format.h>

#include "compiler/hlo/sharding.h"

namespace tpusim::compiler {
namespace {

using hlo::HloSharding;

// True if `s` (or any tuple element) splits a value across devices.
bool SplitsValues(const HloSharding& s) {
  switch (s.kind) {
    case HloSharding::Kind::kReplicated:
    case HloSharding::Kind::kMaximal:
    case HloSharding::Kind::kUnknown:
      return false;
    case HloSharding::Kind::kTuple:
      for (const HloSharding& e : s.tuple_elements) {
        if (SplitsValues(e)) return true;
      }
      return false;
    case HloSharding::Kind::kTiled:
    case HloSharding::Kind::kManual:
      return true;
  }
  return true;
}

}  // namespace

StatusOr<bool> SpmdPartitioner::Run(hlo::HloModule& module) {
  if (module.num_partitions() <= 1) return false;
  const hlo::HloInstruction* split = nullptr;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (hlo::IsCollective(inst->opcode())) return false;  // partitioned by XLA: per-device shapes
      if (split == nullptr && inst->sharding().has_value() && SplitsValues(*inst->sharding())) {
        split = inst.get();
      }
    }
  }
  if (split == nullptr) return false;
  return Unimplemented(fmt::format(
      "{}:{}:{}: %{} ({}) has sharding={} in a module with num_partitions={} that XLA has not "
      "partitioned yet (full-size shapes, no collectives); tpusim's SPMD partitioner does not "
      "split tiled shardings yet. Run XLA's SPMD partitioner first (dump after "
      "'spmd-partitioning'), or drop the annotations to run the module replicated",
      module.source_name(), split->location().line, split->location().column, split->name(),
      hlo::HloOpcodeString(split->opcode()), split->sharding()->ToString(),
      module.num_partitions()));
}

}  // namespace tpusim::compiler
