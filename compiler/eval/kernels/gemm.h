// One GEMM tile through Eigen: c[m x n] = a[m x k] * w[k x n], all row-major with leading
// dimensions (elements between rows) lda/ldw/ldc. Eigen's own threading is not used (the callers
// parallelize over fixed tiles), so a tile's result depends only on its sizes and values.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace tpusim::hlo {

template <typename T>
void GemmTile(const T* a, int64_t lda, const T* w, int64_t ldw, T* c, int64_t ldc, int64_t m,
              int64_t k, int64_t n) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<const Mat, 0, Stride> A(a, m, k, Stride(lda));
  Eigen::Map<const Mat, 0, Stride> W(w, k, n, Stride(ldw));
  Eigen::Map<Mat, 0, Stride> C(c, m, n, Stride(ldc));
  C.noalias() = A * W;
}

}  // namespace tpusim::hlo
