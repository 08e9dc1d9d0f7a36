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

/// A shard_map tpusim cannot run: the first `xla.sdy.GlobalToLocalShape` of a module whose ENTRY is
/// not one fully manual shard_map — a shard_map manual over only some mesh axes, or one inside a
/// larger SPMD program — and why. nullopt when there is none.
struct UnsupportedShardMap {
  const HloInstruction* at = nullptr;
  std::string why;
};
std::optional<UnsupportedShardMap> FindUnsupportedShardMap(const HloModule& module);

}  // namespace tpusim::hlo
