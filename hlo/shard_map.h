// Which jax.shard_map forms tpusim runs. A shard_map that is manual over every axis of the mesh
// and is the whole ENTRY computation (JAX's pmap lowers to one) runs its body on every device as
// replicas (FullyManualShardMapBody, applied by the parser); any other is refused
// with a located error naming its manual axes and the mesh's.
#pragma once

#include <optional>
#include <string>

#include "hlo/module.h"

namespace tpusim::hlo {

/// The per-device program of a module whose ENTRY is one fully manual shard_map (jax.shard_map over
/// every axis of the mesh; JAX's pmap lowers to one): the `xla.sdy.manual_computation_body`
/// computation its ENTRY calls between `xla.sdy.GlobalToLocalShape` and `LocalToGlobalShape`, with
/// nothing else computed there. nullptr for every other module (a partially manual shard_map, or
/// one inside an SPMD program: FindUnsupportedShardMap, which the parser reports).
HloComputation* FullyManualShardMapBody(const HloModule& module);

/// Rewrites the collectives of a fully manual shard_map's body, written for JAX's compile options
/// (1 replica, num_partitions = the mesh's devices), for the parser's run of the body as replicas
/// (replica_count = the mesh's devices, 1 partition), meaning the same devices. XLA's modes
/// (CollectiveOpGroupMode): use_global_device_ids names global ids, the same in both forms (kept);
/// a channel_id without it makes collective-permute, all-to-all, ragged-all-to-all and
/// collective-broadcast cross-partition (ids are partition ids: the channel_id is dropped, so the
/// same ids name replicas); and all-reduce, all-gather and reduce-scatter cross-replica-and-
/// partition (each replica group, of the one replica, spans every partition: one group of every
/// device, `replica_groups={}`). A partition-id (jax.lax.axis_index) becomes a replica-id of the
/// same name. Every other instruction is unchanged.
void ManualBodyCollectivesToReplicas(HloModule& module);

/// A shard_map tpusim cannot run: the first `xla.sdy.GlobalToLocalShape` of a module whose ENTRY is
/// not one fully manual shard_map — a shard_map manual over only some mesh axes, or one inside a
/// larger SPMD program — and why. nullopt when there is none.
struct UnsupportedShardMap {
  const HloInstruction* at = nullptr;
  std::string why;
};
std::optional<UnsupportedShardMap> FindUnsupportedShardMap(const HloModule& module);

}  // namespace tpusim::hlo
