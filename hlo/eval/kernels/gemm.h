// One GEMM tile: c[m x n] = a[m x k] * w[k x n], all row-major with leading dimensions (elements
// between rows) lda/ldw/ldc; through Eigen, or in the MXU's summation order (MxuOrderGemmTile).
// Eigen's own threading is not used (the callers parallelize over fixed tiles), so a tile's result
// depends only on its sizes and values.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tpusim::hlo {

/// The MXU's summation order (sim/core/mxu_model.h "Numerics", DESIGN.md §4): K is cut into
/// consecutive tiles ending at `tile_ends` (increasing, the last = k); each tile's products are
/// summed in f32 in k order, and each tile's sum is added to the running result in turn (the first
/// tile's sum is the initial value). a [m, k], w [k, n], c [m, n], row strides lda/ldw/ldc.
/// `k_order` (k entries; empty = 0, 1, ..) says which K index is summed at each position.
/// `partial_ends` (increasing indices into tile_ends, the last = its size; empty = one sum): the
/// tiles form partial sums, each summed as above from its first tile, and the partial sums are
/// added to c in turn (the first is the initial value) — a convolution whose window columns are
/// folded into N (hlo/convolution_form.h), its column blocks added on the VPU.
template <typename T>
void MxuOrderGemmTiles(const T* a, int64_t lda, const T* w, int64_t ldw, T* c, int64_t ldc,
                       int64_t m, int64_t n, const std::vector<int64_t>& tile_ends,
                       const std::vector<int64_t>& k_order = {},
                       const std::vector<int64_t>& partial_ends = {}) {
  std::vector<T> s(static_cast<size_t>(n)), part(static_cast<size_t>(n));
  const size_t un = static_cast<size_t>(n);
  // The partial sum `dst` (initial: `first`) gets the tile [t0, t1) of row i.
  const auto add_tile = [&](int64_t i, int64_t t0, int64_t t1, T* dst, bool first) {
    std::fill(s.begin(), s.end(), T{0});
    for (int64_t q = t0; q < t1; ++q) {
      const int64_t kk = k_order.empty() ? q : k_order[static_cast<size_t>(q)];
      const T av = a[i * lda + kk];
      const T* wk = w + kk * ldw;
      for (size_t j = 0; j < un; ++j) {
        const T product = av * wk[j];
        s[j] = s[j] + product;
      }
    }
    for (size_t j = 0; j < un; ++j) dst[j] = first ? s[j] : dst[j] + s[j];
  };
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (tile_ends.empty()) std::fill(ci, ci + n, T{0});
    int64_t t0 = 0;
    size_t tile = 0, partial = 0, part_begin = 0;
    for (const int64_t t1 : tile_ends) {
      if (partial_ends.empty()) {
        add_tile(i, t0, t1, ci, t0 == 0);
      } else {
        add_tile(i, t0, t1, part.data(), tile == part_begin);
        if (partial < partial_ends.size() &&
            tile + 1 == static_cast<size_t>(partial_ends[partial])) {
          for (size_t j = 0; j < un; ++j) ci[j] = partial == 0 ? part[j] : ci[j] + part[j];
          ++partial;
          part_begin = tile + 1;
        }
      }
      ++tile;
      t0 = t1;
    }
  }
}

/// MxuOrderGemmTiles with K cut into tiles of `k_tile` rows (the last may be shorter).
template <typename T>
void MxuOrderGemmTile(const T* a, int64_t lda, const T* w, int64_t ldw, T* c, int64_t ldc,
                      int64_t m, int64_t k, int64_t n, int64_t k_tile) {
  std::vector<int64_t> ends;
  for (int64_t t0 = 0; t0 < k; t0 += k_tile) ends.push_back(std::min(k, t0 + k_tile));
  MxuOrderGemmTiles(a, lda, w, ldw, c, ldc, m, n, ends);
}

/// c = a * w: Eigen's blocked GEMM, or the MXU's order when k_tile > 0 (MxuOrderGemmTile).
template <typename T>
void GemmTile(const T* a, int64_t lda, const T* w, int64_t ldw, T* c, int64_t ldc, int64_t m,
              int64_t k, int64_t n, int64_t k_tile) {
  if (k_tile > 0) {
    MxuOrderGemmTile(a, lda, w, ldw, c, ldc, m, k, n, k_tile);
    return;
  }
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<const Mat, 0, Stride> A(a, m, k, Stride(lda));
  Eigen::Map<const Mat, 0, Stride> W(w, k, n, Stride(ldw));
  Eigen::Map<Mat, 0, Stride> C(c, m, n, Stride(ldc));
  C.noalias() = A * W;
}

}  // namespace tpusim::hlo
