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
/// weight tiles of `k_tile` rows (the array's R); for each output, each tile's sum starts at +0 and
/// adds the products in k order, s = fl(s + a*w), and the tile sums are added into the accumulator
/// in tile order, acc = s_0, then acc = fl(acc + s_t). Every product and every addition is rounded
/// on its own (the files including this are compiled with -ffp-contract=off: never a fused
/// multiply-add). With bf16-valued operands every product is exact in f32, so the result is the
/// simulated MXU's bit for bit whenever the lowering keeps this order
/// (compiler/lower/lower_dot.cc). Vectorized across the n columns, as the simulator's fast MXU
/// model is.
template <typename T>
void MxuOrderGemmTile(const T* a, int64_t lda, const T* w, int64_t ldw, T* c, int64_t ldc,
                      int64_t m, int64_t k, int64_t n, int64_t k_tile) {
  std::vector<T> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (k == 0) std::fill(ci, ci + n, T{0});
    for (int64_t t0 = 0; t0 < k; t0 += k_tile) {
      std::fill(s.begin(), s.end(), T{0});
      const int64_t t1 = std::min(k, t0 + k_tile);
      for (int64_t kk = t0; kk < t1; ++kk) {
        const T av = a[i * lda + kk];
        const T* wk = w + kk * ldw;
        for (int64_t j = 0; j < n; ++j) {
          const T product = av * wk[j];
          s[static_cast<size_t>(j)] = s[static_cast<size_t>(j)] + product;
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        ci[j] = t0 == 0 ? s[static_cast<size_t>(j)] : ci[j] + s[static_cast<size_t>(j)];
      }
    }
  }
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
