// Manual sharding for the SPMD partitioner: the regions of a module that its author partitioned by
// hand (jax.shard_map lowered with the GSPMD partitioner, jax.experimental.custom_partitioning,
// PyTorch/XLA's manual sharding), as XLA's SpmdPartitioner handles them
// (xla/service/spmd/spmd_partitioner.cc and custom_call_handler.cc, HandleCustomCall):
//
//  * `custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}` enters a
//    region: its operand is a full-size array cut by its own tiled sharding (the `Sharding`
//    constraint JAX writes before it), and its result, already written per shard, is the local
//    piece of that operand on every partition (XLA: a copy of the operand's partitioned value).
//  * Inside the region every instruction keeps its written (per-device) shape and runs unchanged on
//    every partition; its collectives use the replica groups written in them, and partition-id is
//    the partition's own. A value from outside the region is read whole.
//  * `custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={devices=...}` leaves a
//    region: the per-partition pieces y together are the full-size array cut by that (tiled)
//    sharding, which the partitioner's other rules then reshard as any value (XLA: a copy whose
//    partitioned value has the result's sharding).
//
// The region is the instructions annotated with a manual sharding plus everything computed from a
// region value other than through SPMDShardToFullShape (XLA's sharding propagation gives those a
// manual sharding too). Partially manual shardings (`devices=[...] last_tile_dims={manual}` or
// `{manual, replicated}`: manual over one subgroup of the devices, tiled over the rest) run the
// same way when they do not cut the array over the remaining devices (every non-manual tile count
// is 1: the value is whole on each device of a manual group); a partially manual sharding that cuts
// the array further is Unimplemented with the instruction and its manual subgroup named.
#pragma once

#include <set>

#include "common/status.h"
#include "hlo/module.h"
#include "hlo/sharding.h"

namespace tpusim::compiler::spmd {

inline constexpr const char* kFullToShardTarget = "SPMDFullToShardShape";
inline constexpr const char* kShardToFullTarget = "SPMDShardToFullShape";

bool IsFullToShard(const hlo::HloInstruction& inst);
bool IsShardToFull(const hlo::HloInstruction& inst);

/// True for {manual} and for a tiled sharding with a `manual` last_tile_dims subgroup (or a tuple
/// sharding with such an element).
bool IsManualSharding(const hlo::HloSharding& sharding);

/// True if any computation of `module` contains an SPMDFullToShardShape / SPMDShardToFullShape
/// custom-call or an instruction with a manual sharding: the module is not partitioned yet even
/// if its manual regions contain collectives.
bool HasManualSharding(const hlo::HloModule& module);

/// The ENTRY instructions of `module` in manual regions (rules above). Errors (located,
/// `file:line:col: error: %name (opcode): ...`): Unimplemented for a partially manual sharding that
/// cuts the array over its non-manual devices, a manual ENTRY parameter or root (tpusim feeds
/// full-size arguments and checks full-size results); InvalidArgument for an
/// SPMDFullToShardShape / SPMDShardToFullShape with other than one array operand.
StatusOr<std::set<const hlo::HloInstruction*>> ManualRegion(const hlo::HloModule& module);

}  // namespace tpusim::compiler::spmd
