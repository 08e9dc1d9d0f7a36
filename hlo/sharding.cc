#include "hlo/sharding.h"

#include <fmt/format.h>

#include <algorithm>

namespace tpusim::hlo {
namespace {

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s;
}

// Product with a cap: returns -1 if any factor is negative or the product exceeds kMaxDevices.
int64_t CappedProduct(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) {
    if (d < 0) return -1;
    if (d != 0 && p > kMaxDevices / d) return -1;
    p *= d;
  }
  return p;
}

}  // namespace

StatusOr<std::vector<int64_t>> IotaTileAssignment::Expand() const {
  int64_t n = CappedProduct(dims);
  int64_t m = CappedProduct(reshape_dims);
  if (n < 0 || m < 0) {
    return InvalidArgument(
        fmt::format("iota tile assignment {} has a negative or too large size", ToString()));
  }
  if (n != m) {
    return InvalidArgument(fmt::format(
        "iota tile assignment {}: {} devices in the result but {} in the iota", ToString(), n, m));
  }
  const size_t rank = reshape_dims.size();
  std::vector<int64_t> perm = transpose_perm;
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) {
      return InvalidArgument(
          fmt::format("iota tile assignment {}: T({}) is not a permutation of {} dimensions",
                      ToString(), JoinInts(perm), rank));
    }
  }
  // The transposed array has dims reshape_dims[perm[k]]; element at index t (row-major over the
  // transposed dims) comes from the source index s with s[perm[k]] = t[k].
  std::vector<int64_t> tdims(rank);
  for (size_t k = 0; k < rank; ++k) tdims[k] = reshape_dims[static_cast<size_t>(perm[k])];
  std::vector<int64_t> src_stride(rank, 1);
  for (size_t k = rank; k-- > 1;) src_stride[k - 1] = src_stride[k] * reshape_dims[k];
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<int64_t> t(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k) src += t[k] * src_stride[static_cast<size_t>(perm[k])];
    out.push_back(src);
    for (size_t k = rank; k-- > 0;) {
      if (++t[k] < tdims[k]) break;
      t[k] = 0;
    }
  }
  return out;
}

std::string IotaTileAssignment::ToString() const {
  std::string s = fmt::format("[{}]<=[{}]", JoinInts(dims), JoinInts(reshape_dims));
  if (!transpose_perm.empty()) s += fmt::format("T({})", JoinInts(transpose_perm));
  return s;
}

std::string HloSharding::ToString() const {
  std::string s = "{";
  switch (kind) {
    case Kind::kReplicated:
      s += "replicated";
      break;
    case Kind::kMaximal:
      s += fmt::format("maximal device={}", device);
      break;
    case Kind::kManual:
      s += "manual";
      break;
    case Kind::kUnknown:
      // A named mesh sharding is kept whole in `extra`.
      if (extra.rfind("mesh", 0) == 0 || extra.rfind("maximal_mesh", 0) == 0) {
        return "{" + extra + "}";
      }
      s += "unknown";
      break;
    case Kind::kTiled:
      if (iota_form) {
        s += fmt::format("devices={}", iota.ToString());
      } else {
        s += fmt::format("devices=[{}]{}", JoinInts(tile_assignment_dims),
                         JoinInts(tile_assignment_devices));
      }
      if (last_tile_dim_replicate) s += " last_tile_dim_replicate";
      if (!last_tile_dims.empty()) {
        s += " last_tile_dims={";
        for (size_t i = 0; i < last_tile_dims.size(); ++i) {
          if (i) s += ", ";
          s += last_tile_dims[i];
        }
        s += "}";
      }
      break;
    case Kind::kTuple:
      for (size_t i = 0; i < tuple_elements.size(); ++i) {
        if (i) s += ", ";
        s += tuple_elements[i].ToString();
      }
      break;
  }
  if (!extra.empty()) {
    s += " ";
    s += extra;
  }
  return s + "}";
}

std::string ReplicaGroups::ToString() const {
  if (iota_form) return iota.ToString();
  std::string s = "{";
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i) s += ",";
    s += fmt::format("{{{}}}", JoinInts(groups[i]));
  }
  return s + "}";
}

StatusOr<std::vector<std::vector<int64_t>>> ExpandReplicaGroups(const ReplicaGroups& groups,
                                                                int64_t num_devices) {
  if (num_devices <= 0 || num_devices > kMaxDevices) {
    return InvalidArgument(
        fmt::format("replica groups: device count {} is out of range", num_devices));
  }
  std::vector<std::vector<int64_t>> out;
  if (groups.iota_form) {
    if (groups.iota.dims.size() != 2) {
      return InvalidArgument(fmt::format(
          "replica groups {}: iota form needs [num_groups,group_size]", groups.iota.ToString()));
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, groups.iota.Expand());
    const int64_t size = groups.iota.dims[1];
    for (int64_t g = 0; g < groups.iota.dims[0]; ++g) {
      out.emplace_back(ids.begin() + g * size, ids.begin() + (g + 1) * size);
    }
  } else if (groups.groups.empty()) {
    out.emplace_back();
    for (int64_t i = 0; i < num_devices; ++i) out.back().push_back(i);
  } else {
    out = groups.groups;
  }
  std::vector<bool> seen(static_cast<size_t>(num_devices), false);
  for (const auto& g : out) {
    for (int64_t id : g) {
      if (id < 0 || id >= num_devices) {
        return InvalidArgument(fmt::format("replica groups {}: device {} is not in [0, {})",
                                           groups.ToString(), id, num_devices));
      }
      if (seen[static_cast<size_t>(id)]) {
        return InvalidArgument(
            fmt::format("replica groups {}: device {} appears twice", groups.ToString(), id));
      }
      seen[static_cast<size_t>(id)] = true;
    }
  }
  return out;
}

}  // namespace tpusim::hlo
