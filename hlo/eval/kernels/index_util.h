// Row-major index arithmetic shared by the kernels: strides, multi-index <-> linear index, and an
// odometer that walks every index of a shape in row-major order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tpusim::hlo {

/// Row-major strides (in elements) of `dims`: stride[k] = prod_{j>k} dims[j].
inline std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) {
    s[static_cast<size_t>(k)] = s[static_cast<size_t>(k) + 1] * dims[static_cast<size_t>(k) + 1];
  }
  return s;
}

inline int64_t Product(std::span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

/// Advances `index` to the next row-major index within `dims`; false after the last one.
inline bool NextIndex(std::span<int64_t> index, std::span<const int64_t> dims) {
  for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
    size_t uk = static_cast<size_t>(k);
    if (++index[uk] < dims[uk]) return true;
    index[uk] = 0;
  }
  return false;
}

/// Calls fn(index) for every multi-index of `dims` in row-major order (once for rank 0; never if
/// any dimension is 0).
template <typename F>
void ForEachIndex(std::span<const int64_t> dims, F&& fn) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  do {
    fn(std::span<const int64_t>(index));
  } while (NextIndex(index, dims));
}

/// The multi-index of linear row-major index `linear` within `dims`.
inline void DelinearizeIndex(int64_t linear, std::span<const int64_t> dims,
                             std::span<int64_t> out) {
  for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
    size_t uk = static_cast<size_t>(k);
    out[uk] = dims[uk] == 0 ? 0 : linear % dims[uk];
    linear = dims[uk] == 0 ? 0 : linear / dims[uk];
  }
}

}  // namespace tpusim::hlo
