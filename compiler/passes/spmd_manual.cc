#include "compiler/passes/spmd_manual.h"

#include <fmt/format.h>

#include <string>

#include "common/diagnostic.h"

namespace tpusim::compiler::spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;

std::string Where(const hlo::HloModule& module, const HloInstruction& inst) {
  return FormatDiagnostic(
      module.source_name(), "", inst.location(),
      fmt::format("%{} ({})", inst.name(), hlo::HloOpcodeString(inst.opcode())));
}

bool IsCustomCall(const HloInstruction& inst, const char* target) {
  return inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == target;
}

bool HasManualSubgroup(const HloSharding& s) {
  for (const std::string& t : s.last_tile_dims) {
    if (t == "manual") return true;
  }
  return false;
}

// A partially manual sharding of an array of rank `rank` that also cuts the array over its
// non-manual devices (a data tile count > 1).
bool CutsBeyondManual(const HloSharding& s, int64_t rank) {
  if (s.kind != HloSharding::Kind::kTiled || !HasManualSubgroup(s)) return false;
  for (int64_t d = 0; d < rank && d < static_cast<int64_t>(s.tile_assignment_dims.size()); ++d) {
    if (s.tile_assignment_dims[static_cast<size_t>(d)] > 1) return true;
  }
  return false;
}

}  // namespace

bool IsFullToShard(const HloInstruction& inst) { return IsCustomCall(inst, kFullToShardTarget); }
bool IsShardToFull(const HloInstruction& inst) { return IsCustomCall(inst, kShardToFullTarget); }

bool IsManualSharding(const HloSharding& s) {
  switch (s.kind) {
    case HloSharding::Kind::kManual:
      return true;
    case HloSharding::Kind::kTiled:
      return HasManualSubgroup(s);
    case HloSharding::Kind::kTuple:
      for (const HloSharding& e : s.tuple_elements) {
        if (IsManualSharding(e)) return true;
      }
      return false;
    default:
      return false;
  }
}

bool HasManualSharding(const hlo::HloModule& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (IsFullToShard(*inst) || IsShardToFull(*inst)) return true;
      if (inst->sharding() && IsManualSharding(*inst->sharding())) return true;
    }
  }
  return false;
}

StatusOr<std::set<const HloInstruction*>> ManualRegion(const hlo::HloModule& module) {
  std::set<const HloInstruction*> region;
  const hlo::HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return region;
  for (const auto& up : entry->instructions()) {  // operands come first
    const HloInstruction& inst = *up;
    if (IsFullToShard(inst) || IsShardToFull(inst)) {
      if (inst.operand_count() != 1 || !inst.operand(0)->shape().IsArray() ||
          !inst.shape().IsArray()) {
        return InvalidArgument(
            fmt::format("{}: custom_call_target=\"{}\" takes one array operand and gives an array",
                        Where(module, inst), inst.custom_call_target()));
      }
    }
    if (IsShardToFull(inst)) continue;  // leaves the region
    bool manual = IsFullToShard(inst);
    if (inst.sharding() && IsManualSharding(*inst.sharding())) {
      const HloSharding& s = *inst.sharding();
      const int64_t rank = inst.shape().IsArray() ? inst.shape().rank() : 0;
      if (CutsBeyondManual(s, rank)) {
        return Unimplemented(fmt::format(
            "{}: sharding={} is manual over the last_tile_dims={{manual}} subgroup of the devices "
            "and also cuts the array over the other devices; tpusim's SPMD partitioner runs a "
            "partially manual region only when its values are whole on every device of a manual "
            "group (tile counts of 1 before the subgroup dimensions)",
            Where(module, inst), s.ToString()));
      }
      manual = true;
    }
    for (const HloInstruction* op : inst.operands()) manual = manual || region.count(op) > 0;
    if (!manual) continue;
    if (inst.opcode() == HloOpcode::kParameter || &inst == entry->root_instruction()) {
      return Unimplemented(fmt::format(
          "{}: the {} of the ENTRY computation is in a manual region (sharding={}); tpusim "
          "feeds full-size arguments and checks full-size results: enter the region with "
          "SPMDFullToShardShape and leave it with SPMDShardToFullShape",
          Where(module, inst), inst.opcode() == HloOpcode::kParameter ? "parameter" : "result",
          inst.sharding() ? inst.sharding()->ToString() : std::string("{manual}")));
    }
    region.insert(&inst);
  }
  return region;
}

}  // namespace tpusim::compiler::spmd
