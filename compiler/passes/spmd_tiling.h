// Tiling: an HloSharding of one array normalised for the SPMD partitioner — how many tiles each
// dimension is cut into, how many partitions hold a copy of each tile, and which partition holds
// which tile. {replicated} and {maximal device=d} become one tile held by every partition
// (maximal: every partition computes the value, which gives the same values as running it on
// device d only; the cycles of the other partitions are then an over-estimate).
//
// The device array is XLA's tile assignment with `last_tile_dim_replicate` always present:
// devices has product(tiles) * replication entries, row-major over [tiles..., replication], so the
// tile of dimension i held by partition p is IndexOf(p)[i]. Every partition 0..N-1 appears exactly
// once (xla/hlo/ir/hlo_sharding.h; tile_assignment.h for the iota form).
//
// Shards are even: dimension i of size n is cut into tiles[i] pieces of n / tiles[i] (the
// partitioner refuses uneven cuts; XLA pads them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "hlo/shape.h"
#include "hlo/sharding.h"

namespace tpusim::compiler::spmd {

struct Tiling {
  std::vector<int64_t> tiles;    // per array dimension, >= 1
  int64_t replication = 1;       // partitions holding each tile, >= 1
  std::vector<int64_t> devices;  // row-major over [tiles..., replication]; a permutation of 0..N-1

  int64_t rank() const { return static_cast<int64_t>(tiles.size()); }
  int64_t num_partitions() const { return static_cast<int64_t>(devices.size()); }
  /// product(tiles): 1 means every partition holds the whole array.
  int64_t num_tiles() const;
  bool IsReplicated() const { return num_tiles() == 1; }
  /// Index of `partition` over [tiles..., replication] (rank + 1 entries). `partition` must be in
  /// [0, num_partitions()) (checked).
  std::vector<int64_t> IndexOf(int64_t partition) const;
  /// IndexOf(p) for every partition p, in O(num_partitions * rank) (IndexOf is O(num_partitions)).
  std::vector<std::vector<int64_t>> Indices() const;
  /// The HloSharding XLA would write: {replicated}, or devices=[tiles(,replication)]ids with
  /// last_tile_dim_replicate when replication > 1.
  hlo::HloSharding ToHloSharding() const;
  std::string ToString() const { return ToHloSharding().ToString(); }

  static Tiling Replicated(int64_t rank, int64_t num_partitions);
};

/// The Tiling of an array of rank `rank` annotated `sharding` in a module with `num_partitions`
/// partitions. InvalidArgument (message without location; the caller adds it) when the tile
/// assignment names more or fewer devices than num_partitions, is not a permutation of
/// 0..num_partitions-1, or has the wrong rank; Unimplemented for manual/unknown/tuple shardings and
/// `last_tile_dims` subgroups other than replicated.
StatusOr<Tiling> TilingFromSharding(const hlo::HloSharding& sharding, int64_t rank,
                                    int64_t num_partitions);

/// True if every partition holds the same piece of the array under `a` and `b` (the device order
/// within a replication group does not matter).
bool SameLayout(const Tiling& a, const Tiling& b);

/// True if every dimension of `dims` divides evenly into its tiles.
bool DividesEvenly(const std::vector<int64_t>& dims, const Tiling& t);
/// The per-partition dimensions: dims[i] / tiles[i] (DividesEvenly must hold; checked).
std::vector<int64_t> ShardDims(const std::vector<int64_t>& dims, const Tiling& t);
/// Element offsets of `partition`'s shard in the full array: IndexOf(partition)[i] * shard dim i.
std::vector<int64_t> ShardOffsets(const std::vector<int64_t>& dims, const Tiling& t,
                                  int64_t partition);

/// Re-labels the axes of `t` for another array: dimension i of the new array is axis
/// source_axes[i] of `t` (an array dimension of `t`, or -1 for a new dimension with one tile).
/// Array dimensions of `t` not listed are folded into the replication (their partitions now hold
/// the same piece). Used for transpose (source_axes = permutation), broadcast (both ways), reduce
/// (kept dimensions) and dot (operand and result dimensions of the dot's tiling).
Tiling Remap(const Tiling& t, const std::vector<int64_t>& source_axes);

/// Builds a Tiling with `tiles` from a function giving each partition's tile index (rank entries);
/// nullopt unless every tile is held by exactly num_partitions / product(tiles) partitions.
/// Replication indices follow the partition order.
std::optional<Tiling> TilingFromIndices(
    const std::vector<int64_t>& tiles, const std::vector<std::vector<int64_t>>& index_of_partition);

/// Partition groups that hold pieces differing only along array dimensions `axes` of `t`: one group
/// per combination of the other tile indices (and replication index), members in row-major order
/// of their indices along `axes` — the order an all-gather concatenates them and an all-reduce
/// folds them. Groups are listed in row-major order of the other indices.
std::vector<std::vector<int64_t>> GroupsAlong(const Tiling& t, const std::vector<int64_t>& axes);

/// The Tiling of reshape's result (`to_dims`) when its operand (`from_dims`) has tiling `from`:
/// every cut dimension i of the operand must meet a result dimension j at the same position in the
/// row-major order (product(from_dims[:i]) == product(to_dims[:j])) that its tiles divide.
/// nullopt if some cut dimension has no such partner (the partitioner then gathers the operand).
std::optional<Tiling> ReshapeTiling(const std::vector<int64_t>& from_dims,
                                    const std::vector<int64_t>& to_dims, const Tiling& from);

}  // namespace tpusim::compiler::spmd
