// Device assignments written in HLO text: `sharding={...}` (HloSharding) and `replica_groups=...`
// (collectives). Both may use XLA's compact iota form, `[4,2]<=[2,4]T(1,0)`: take iota(0..N-1),
// reshape it to reshape_dims ([2,4]), transpose by perm (1,0), reshape to dims ([4,2]).
// IotaTileAssignment keeps the compact form (so printing is lossless) and Expand() gives the
// explicit device list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tpusim::hlo {

/// `[dims]<=[reshape_dims]T(perm)`; perm empty means identity.
struct IotaTileAssignment {
  std::vector<int64_t> dims;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;
  /// The device ids in row-major order of `dims` (product(dims) values). InvalidArgument if
  /// product(dims) != product(reshape_dims), perm is not a permutation of reshape_dims' indices, or
  /// the count exceeds kMaxDevices.
  StatusOr<std::vector<int64_t>> Expand() const;
  std::string ToString() const;  // "[4,2]<=[2,4]T(1,0)"
  bool operator==(const IotaTileAssignment&) const = default;
};

/// Upper bound on devices in one tile assignment / replica group list (guards against hostile
/// input).
inline constexpr int64_t kMaxDevices = int64_t{1} << 20;

/// `sharding={...}`. A tuple-shaped value has kTuple with one element per leaf.
struct HloSharding {
  enum class Kind : uint8_t { kReplicated, kMaximal, kManual, kUnknown, kTiled, kTuple };
  Kind kind = Kind::kReplicated;
  int64_t device = 0;  // kMaximal: `{maximal device=3}`
  // kTiled: `devices=[2,1,2]0,1,2,3` or `devices=[2,1,2]<=[4]`.
  std::vector<int64_t> tile_assignment_dims;
  std::vector<int64_t>
      tile_assignment_devices;  // always explicit (iota expanded), row-major over dims
  bool iota_form = false;       // written with `<=`; `iota` holds the compact form
  IotaTileAssignment iota;
  bool last_tile_dim_replicate = false;
  std::vector<std::string> last_tile_dims;  // `last_tile_dims={manual, replicated}` subgroup types
  std::vector<HloSharding> tuple_elements;  // kTuple
  std::string
      extra;  // trailing parts kept verbatim: `metadata={...}`, `shard_as 0`, `shard_like 1`
  std::string ToString()
      const;  // "{devices=[2,1]0,1}", "{replicated}", "{{replicated}, {maximal device=0}}"
  bool operator==(const HloSharding&) const = default;
};

/// `replica_groups={{0,1},{2,3}}`, `{}` (all replicas in one group) or iota `[2,4]<=[8]` (2 groups
/// of 4).
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;  // explicit form; empty for `{}` and for the iota form
  bool iota_form = false;
  IotaTileAssignment iota;       // iota.dims = [num_groups, group_size]
  std::string ToString() const;  // as XLA prints it
  bool operator==(const ReplicaGroups&) const = default;
};

/// Explicit groups: the explicit list as is; `{}` -> one group {0..num_devices-1}; iota -> rows of
/// the expanded [num_groups, group_size] array. `num_devices` is the replica count (or replicas ×
/// partitions with use_global_device_ids). InvalidArgument if an id is out of [0, num_devices) or
/// the iota form is bad.
StatusOr<std::vector<std::vector<int64_t>>> ExpandReplicaGroups(const ReplicaGroups& groups,
                                                                int64_t num_devices);

}  // namespace tpusim::hlo
