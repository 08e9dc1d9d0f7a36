#include "compiler/passes/spmd_tiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/check.h"

namespace tpusim::compiler::spmd {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Row-major linear index of `index` over `dims`.
int64_t Linear(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t l = 0;
  for (size_t i = 0; i < dims.size(); ++i) l = l * dims[i] + index[i];
  return l;
}

// Row-major multi-index of `linear` over `dims`.
std::vector<int64_t> Unlinear(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

std::vector<int64_t> ArrayDims(const Tiling& t) {
  std::vector<int64_t> dims = t.tiles;
  dims.push_back(t.replication);
  return dims;
}

}  // namespace

int64_t Tiling::num_tiles() const { return Product(tiles); }

std::vector<int64_t> Tiling::IndexOf(int64_t partition) const {
  auto it = std::find(devices.begin(), devices.end(), partition);
  TPUSIM_CHECK(it != devices.end()) << "partition " << partition << " not in " << ToString();
  return Unlinear(it - devices.begin(), ArrayDims(*this));
}

std::vector<std::vector<int64_t>> Tiling::Indices() const {
  const std::vector<int64_t> dims = ArrayDims(*this);
  std::vector<std::vector<int64_t>> out(devices.size());
  for (size_t pos = 0; pos < devices.size(); ++pos) {
    const int64_t p = devices[pos];
    TPUSIM_CHECK(p >= 0 && p < num_partitions()) << "device " << p << " in " << ToString();
    out[static_cast<size_t>(p)] = Unlinear(static_cast<int64_t>(pos), dims);
  }
  return out;
}

hlo::HloSharding Tiling::ToHloSharding() const {
  hlo::HloSharding s;
  if (IsReplicated()) return s;  // kReplicated
  s.kind = hlo::HloSharding::Kind::kTiled;
  s.tile_assignment_dims = tiles;
  if (replication > 1) {
    s.tile_assignment_dims.push_back(replication);
    s.last_tile_dim_replicate = true;
  }
  s.tile_assignment_devices = devices;
  return s;
}

Tiling Tiling::Replicated(int64_t rank, int64_t num_partitions) {
  Tiling t;
  t.tiles.assign(static_cast<size_t>(rank), 1);
  t.replication = num_partitions;
  for (int64_t p = 0; p < num_partitions; ++p) t.devices.push_back(p);
  return t;
}

StatusOr<Tiling> TilingFromSharding(const hlo::HloSharding& s, int64_t rank,
                                    int64_t num_partitions) {
  using Kind = hlo::HloSharding::Kind;
  switch (s.kind) {
    case Kind::kReplicated:
      return Tiling::Replicated(rank, num_partitions);
    case Kind::kMaximal:
      if (s.device < 0 || s.device >= num_partitions) {
        return InvalidArgument(fmt::format("sharding {} names device {}, but num_partitions={}",
                                           s.ToString(), s.device, num_partitions));
      }
      return Tiling::Replicated(rank, num_partitions);
    case Kind::kManual:
    case Kind::kUnknown:
    case Kind::kTuple:
      return Unimplemented(fmt::format(
          "sharding {} is not supported by tpusim's SPMD partitioner (tiled, replicated and "
          "maximal shardings are)",
          s.ToString()));
    case Kind::kTiled:
      break;
  }
  const std::vector<int64_t>& dims = s.tile_assignment_dims;
  int64_t trailing = 0;  // dimensions after the array's: replication subgroups
  if (s.last_tile_dim_replicate) trailing = 1;
  if (!s.last_tile_dims.empty()) {
    for (const std::string& type : s.last_tile_dims) {
      if (type != "replicated") {
        return Unimplemented(fmt::format(
            "sharding {}: last_tile_dims subgroup '{}' is not supported (only replicated)",
            s.ToString(), type));
      }
    }
    trailing = static_cast<int64_t>(s.last_tile_dims.size());
  }
  if (static_cast<int64_t>(dims.size()) != rank + trailing) {
    return InvalidArgument(fmt::format(
        "sharding {} has {} tile assignment dimensions, but the array has rank {}{}", s.ToString(),
        dims.size(), rank, trailing ? fmt::format(" (+{} replication)", trailing) : ""));
  }
  Tiling t;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) {
      return InvalidArgument(
          fmt::format("sharding {}: tile count {} is not positive", s.ToString(), dims[i]));
    }
    if (static_cast<int64_t>(i) < rank) {
      t.tiles.push_back(dims[i]);
    } else {
      t.replication *= dims[i];
    }
  }
  const int64_t devices = static_cast<int64_t>(s.tile_assignment_devices.size());
  if (devices != num_partitions || Product(dims) != num_partitions) {
    return InvalidArgument(fmt::format(
        "sharding {} is a mesh of {} devices, but the module has num_partitions={} (the tile "
        "assignment must name every partition once)",
        s.ToString(), std::max(devices, Product(dims)), num_partitions));
  }
  std::vector<bool> seen(static_cast<size_t>(num_partitions), false);
  for (int64_t d : s.tile_assignment_devices) {
    if (d < 0 || d >= num_partitions || seen[static_cast<size_t>(d)]) {
      return InvalidArgument(fmt::format(
          "sharding {}: the tile assignment is not a permutation of 0..{} (device {} {})",
          s.ToString(), num_partitions - 1, d,
          d < 0 || d >= num_partitions ? "is out of range" : "appears twice"));
    }
    seen[static_cast<size_t>(d)] = true;
  }
  t.devices = s.tile_assignment_devices;
  return t;
}

bool SameLayout(const Tiling& a, const Tiling& b) {
  if (a.tiles != b.tiles || a.num_partitions() != b.num_partitions()) return false;
  if (a.IsReplicated()) return true;
  const auto ia = a.Indices(), ib = b.Indices();
  for (size_t p = 0; p < ia.size(); ++p) {
    if (!std::equal(ia[p].begin(), ia[p].end() - 1, ib[p].begin())) return false;
  }
  return true;
}

bool DividesEvenly(const std::vector<int64_t>& dims, const Tiling& t) {
  if (dims.size() != t.tiles.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % t.tiles[i] != 0) return false;
  }
  return true;
}

std::vector<int64_t> ShardDims(const std::vector<int64_t>& dims, const Tiling& t) {
  TPUSIM_CHECK(DividesEvenly(dims, t))
      << "uneven shard of rank " << dims.size() << " by " << t.ToString();
  std::vector<int64_t> out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) out[i] = dims[i] / t.tiles[i];
  return out;
}

std::vector<int64_t> ShardOffsets(const std::vector<int64_t>& dims, const Tiling& t,
                                  int64_t partition) {
  std::vector<int64_t> shard = ShardDims(dims, t);
  std::vector<int64_t> index = t.IndexOf(partition);
  for (size_t i = 0; i < shard.size(); ++i) shard[i] *= index[i];
  return shard;
}

Tiling Remap(const Tiling& t, const std::vector<int64_t>& source_axes) {
  const int64_t rank = t.rank();
  std::vector<bool> used(static_cast<size_t>(rank), false);
  Tiling out;
  for (int64_t a : source_axes) {
    TPUSIM_CHECK(a >= -1 && a < rank) << "Remap axis " << a << " of rank " << rank;
    if (a >= 0) {
      TPUSIM_CHECK(!used[static_cast<size_t>(a)]) << "Remap uses axis " << a << " twice";
      used[static_cast<size_t>(a)] = true;
    }
    out.tiles.push_back(a >= 0 ? t.tiles[static_cast<size_t>(a)] : 1);
  }
  // Folded axes (unused array dimensions, then the old replication) form the new replication.
  std::vector<int64_t> folded_dims;
  for (int64_t a = 0; a < rank; ++a) {
    if (!used[static_cast<size_t>(a)]) folded_dims.push_back(t.tiles[static_cast<size_t>(a)]);
  }
  folded_dims.push_back(t.replication);
  out.replication = Product(folded_dims);
  out.devices.assign(t.devices.size(), -1);
  std::vector<int64_t> out_dims = ArrayDims(out);
  const auto indices = t.Indices();
  for (int64_t p = 0; p < t.num_partitions(); ++p) {
    const std::vector<int64_t>& src = indices[static_cast<size_t>(p)];
    std::vector<int64_t> dst;
    for (int64_t a : source_axes) dst.push_back(a >= 0 ? src[static_cast<size_t>(a)] : 0);
    std::vector<int64_t> folded;
    for (int64_t a = 0; a < rank; ++a) {
      if (!used[static_cast<size_t>(a)]) folded.push_back(src[static_cast<size_t>(a)]);
    }
    folded.push_back(src.back());
    dst.push_back(Linear(folded, folded_dims));
    out.devices[static_cast<size_t>(Linear(dst, out_dims))] = p;
  }
  return out;
}

std::optional<Tiling> TilingFromIndices(
    const std::vector<int64_t>& tiles,
    const std::vector<std::vector<int64_t>>& index_of_partition) {
  const int64_t n = static_cast<int64_t>(index_of_partition.size());
  const int64_t num_tiles = Product(tiles);
  if (num_tiles <= 0 || n % num_tiles != 0) return std::nullopt;
  Tiling t;
  t.tiles = tiles;
  t.replication = n / num_tiles;
  t.devices.assign(static_cast<size_t>(n), -1);
  std::map<int64_t, int64_t> copies;  // tile linear index -> partitions seen so far
  for (int64_t p = 0; p < n; ++p) {
    const std::vector<int64_t>& index = index_of_partition[static_cast<size_t>(p)];
    if (index.size() != tiles.size()) return std::nullopt;
    for (size_t i = 0; i < tiles.size(); ++i) {
      if (index[i] < 0 || index[i] >= tiles[i]) return std::nullopt;
    }
    const int64_t tile = Linear(index, tiles);
    const int64_t copy = copies[tile]++;
    if (copy >= t.replication) return std::nullopt;
    t.devices[static_cast<size_t>(tile * t.replication + copy)] = p;
  }
  return t;
}

std::vector<std::vector<int64_t>> GroupsAlong(const Tiling& t, const std::vector<int64_t>& axes) {
  const std::vector<int64_t> dims = ArrayDims(t);
  std::vector<bool> along(dims.size(), false);
  for (int64_t a : axes) along[static_cast<size_t>(a)] = true;
  std::map<int64_t, std::map<int64_t, int64_t>> groups;  // other index -> along index -> partition
  std::vector<int64_t> along_dims, other_dims;
  for (size_t i = 0; i < dims.size(); ++i) (along[i] ? along_dims : other_dims).push_back(dims[i]);
  const auto indices = t.Indices();
  for (int64_t p = 0; p < t.num_partitions(); ++p) {
    const std::vector<int64_t>& index = indices[static_cast<size_t>(p)];
    std::vector<int64_t> a, o;
    for (size_t i = 0; i < dims.size(); ++i) (along[i] ? a : o).push_back(index[i]);
    groups[Linear(o, other_dims)][Linear(a, along_dims)] = p;
  }
  std::vector<std::vector<int64_t>> out;
  for (const auto& [other, members] : groups) {
    out.emplace_back();
    for (const auto& [pos, p] : members) out.back().push_back(p);
  }
  return out;
}

std::optional<Tiling> ReshapeTiling(const std::vector<int64_t>& from_dims,
                                    const std::vector<int64_t>& to_dims, const Tiling& from) {
  if (from.IsReplicated())
    return Tiling::Replicated(static_cast<int64_t>(to_dims.size()), from.num_partitions());
  std::vector<int64_t> source(to_dims.size(), -1);
  for (size_t i = 0; i < from_dims.size(); ++i) {
    const int64_t k = from.tiles[i];
    if (k == 1) continue;
    int64_t prefix_from = 1;
    for (size_t a = 0; a < i; ++a) prefix_from *= from_dims[a];
    int64_t prefix_to = 1;
    bool found = false;
    for (size_t j = 0; j < to_dims.size(); ++j) {
      if (prefix_to == prefix_from && to_dims[j] % k == 0 && from_dims[i] % k == 0 &&
          to_dims[j] > 1 && source[j] < 0) {
        source[j] = static_cast<int64_t>(i);
        found = true;
        break;
      }
      prefix_to *= to_dims[j];
    }
    if (!found) return std::nullopt;
  }
  return Remap(from, source);
}

}  // namespace tpusim::compiler::spmd
