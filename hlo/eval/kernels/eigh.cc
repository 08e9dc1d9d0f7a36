#include "hlo/eval/kernels/eigh.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "hlo/eval/kernels/householder_qr.h"
#include "hlo/eval/kernels/linalg.h"

namespace tpusim::hlo {
namespace {

// One k x k quadrant, row-major.
template <typename T>
struct Quad {
  int64_t k = 0;
  std::vector<T> x;
  T& at(int64_t i, int64_t j) { return x[static_cast<size_t>(i * k + j)]; }
};

// The padded matrix as quadrants tl, tr, bl, br (indices 0..3).
template <typename T>
using Quads = std::array<Quad<T>, 4>;
enum { kTl = 0, kTr = 1, kBl = 2, kBr = 3 };

template <typename T>
struct Rotation {
  std::vector<T> c, s, rt1, rt2;
};

// The 2x2 symmetric Schur rotations of the k diagonal pairs (XLA's
// HermitianEigenDecomposition2x2 for real types).
template <typename T>
Rotation<T> SchurRotations(Quads<T>& w) {
  const int64_t k = w[kTl].k;
  Rotation<T> r;
  r.c.resize(static_cast<size_t>(k));
  r.s = r.rt1 = r.rt2 = r.c;
  // XLA's kFudgeFactor 0.1f times f32's epsilon, for every type.
  const T tiny = static_cast<T>(0.1f * std::numeric_limits<float>::epsilon());
  for (int64_t i = 0; i < k; ++i) {
    const T a = w[kTl].at(i, i), b = w[kTr].at(i, i), d = w[kBr].at(i, i);
    // t = 0 for a tiny off-diagonal (always for b == 0: no division by zero).
    T t = 0;
    if (b != 0 && !(std::abs(b) <= tiny * std::min(std::abs(a), std::abs(d)))) {
      const T tau = (d - a) / (2 * b);
      const T root = std::sqrt(1 + tau * tau);
      t = 1 / (tau + (tau >= 0 ? root : -root));
    }
    const T c = 1 / std::sqrt(1 + t * t);
    const auto u = static_cast<size_t>(i);
    r.c[u] = c;
    r.s[u] = t * c;
    r.rt1[u] = a - t * b;
    r.rt2[u] = d + t * b;
  }
  return r;
}

// Rows i of the top and bottom quadrants rotated: top*c - bottom*s, top*s + bottom*c.
template <typename T>
void RotateRows(const Rotation<T>& r, Quad<T>& top, Quad<T>& bottom) {
  for (int64_t i = 0; i < top.k; ++i) {
    const T c = r.c[static_cast<size_t>(i)], s = r.s[static_cast<size_t>(i)];
    for (int64_t j = 0; j < top.k; ++j) {
      const T t = top.at(i, j), b = bottom.at(i, j);
      top.at(i, j) = t * c - b * s;
      bottom.at(i, j) = t * s + b * c;
    }
  }
}

// Columns i of the left and right quadrants rotated: left*c - right*s, left*s + right*c.
template <typename T>
void RotateCols(const Rotation<T>& r, Quad<T>& left, Quad<T>& right) {
  for (int64_t i = 0; i < left.k; ++i) {
    for (int64_t j = 0; j < left.k; ++j) {
      const T c = r.c[static_cast<size_t>(j)], s = r.s[static_cast<size_t>(j)];
      const T l = left.at(i, j), rt = right.at(i, j);
      left.at(i, j) = l * c - rt * s;
      right.at(i, j) = l * s + rt * c;
    }
  }
}

// Brent and Luk's round-robin step over the rows (`rows`) or columns of a pair of quadrants:
// first = [first[0], second[0], first[1 .. k-2]], second = [second[1 .. k-1], first[k-1]].
template <typename T>
void Permute(Quad<T>& first, Quad<T>& second, bool rows) {
  const int64_t k = first.k;
  if (k <= 1) return;
  const Quad<T> f = first, s = second;
  auto get = [rows](const Quad<T>& q, int64_t line, int64_t j) {
    return rows ? q.x[static_cast<size_t>(line * q.k + j)]
                : q.x[static_cast<size_t>(j * q.k + line)];
  };
  auto set = [rows](Quad<T>& q, int64_t line, int64_t j, T v) {
    (rows ? q.at(line, j) : q.at(j, line)) = v;
  };
  for (int64_t j = 0; j < k; ++j) {
    set(first, 1, j, get(s, 0, j));
    for (int64_t l = 2; l < k; ++l) set(first, l, j, get(f, l - 1, j));
    for (int64_t l = 0; l + 1 < k; ++l) set(second, l, j, get(s, l + 1, j));
    set(second, k - 1, j, get(f, k - 1, j));
  }
}

// One round: rotate the k pairs of `w`, rotate the rows of `v`, permute both.
template <typename T>
void Round(Quads<T>& w, Quads<T>& v) {
  const Rotation<T> r = SchurRotations(w);
  RotateRows(r, w[kTl], w[kBl]);
  RotateRows(r, w[kTr], w[kBr]);
  RotateCols(r, w[kTl], w[kTr]);
  RotateCols(r, w[kBl], w[kBr]);
  for (int64_t i = 0; i < w[kTl].k; ++i) {
    const auto u = static_cast<size_t>(i);
    w[kTl].at(i, i) = r.rt1[u];
    w[kTr].at(i, i) = 0;
    w[kBl].at(i, i) = 0;
    w[kBr].at(i, i) = r.rt2[u];
  }
  Permute(w[kTl], w[kTr], /*rows=*/false);
  Permute(w[kBl], w[kBr], /*rows=*/false);
  Permute(w[kTl], w[kBl], /*rows=*/true);
  Permute(w[kTr], w[kBr], /*rows=*/true);
  RotateRows(r, v[kTl], v[kBl]);
  RotateRows(r, v[kTr], v[kBr]);
  Permute(v[kTl], v[kBl], /*rows=*/true);
  Permute(v[kTr], v[kBr], /*rows=*/true);
}

// Whether `w` still needs a sweep: ||offdiag||^2 > epsilon^2 ||w||^2.
template <typename T>
bool Unconverged(Quads<T>& w, T epsilon) {
  T all = 0, off = 0;
  for (Quad<T>& q : w) {
    for (T e : q.x) all += e * e;
  }
  for (int q = 0; q < 4; ++q) {
    for (int64_t i = 0; i < w[q].k; ++i) {
      for (int64_t j = 0; j < w[q].k; ++j) {
        if (i == j && (q == kTl || q == kBr)) continue;
        off += w[q].at(i, j) * w[q].at(i, j);
      }
    }
  }
  return all * (epsilon * epsilon) < off;
}

// Matrix b of `a` symmetrized, scaled and split into quadrants; its scale.
template <typename T>
T Prepare(const Literal& a, int64_t b, int64_t n, bool lower, Quads<T>& w, Quads<T>& v) {
  const int64_t k = (n + 1) / 2, base = b * n * n;
  for (Quad<T>& q : w) q = Quad<T>{k, std::vector<T>(static_cast<size_t>(k * k), T{0})};
  v = w;
  for (int64_t i = 0; i < k; ++i) v[kTl].at(i, i) = v[kBr].at(i, i) = 1;
  auto read = [&](int64_t i, int64_t j) {
    const bool own = lower ? i >= j : i <= j;
    return static_cast<T>(own ? a.GetAsDouble(base + i * n + j) : a.GetAsDouble(base + j * n + i));
  };
  T scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) scale = std::max(scale, std::abs(read(i, j)));
  }
  if (scale == 0) scale = 1;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      w[(i >= k ? 2 : 0) + (j >= k ? 1 : 0)].at(i % k, j % k) = read(i, j) / scale;
    }
  }
  return scale;
}

// Sweeps on the batch `w` (and `v`) until none needs one or max_iter; the sweeps run.
template <typename T>
int64_t RunSweeps(std::vector<Quads<T>>& w, std::vector<Quads<T>>& v, const EighOptions& o) {
  const int64_t k = w.empty() ? 0 : w[0][kTl].k;
  const T epsilon = static_cast<T>(o.epsilon);
  int64_t sweep = 0;
  for (; sweep < o.max_iter; ++sweep) {
    bool any = false;
    for (Quads<T>& q : w) any = Unconverged(q, epsilon) || any;
    if (!any) break;
    for (size_t u = 0; u < w.size(); ++u) {
      for (int64_t r = 0; r < 2 * k - 1; ++r) Round(w[u], v[u]);
    }
  }
  return sweep;
}

Status CheckShapes(const Literal& a, const Batched& d, bool lapack_info, const Shape& out) {
  std::vector<int64_t> batch(a.shape().dimensions().begin(), a.shape().dimensions().end() - 2);
  std::vector<int64_t> wdims = batch;
  wdims.push_back(d.rows);
  const size_t parts = lapack_info ? 3 : 2;
  const bool ok = d.rows == d.cols && out.IsTuple() && out.tuple_shapes().size() == parts &&
                  out.tuple_shapes(0).IsArray() &&
                  out.tuple_shapes(0).dimensions() == a.shape().dimensions() &&
                  out.tuple_shapes(1).IsArray() && out.tuple_shapes(1).dimensions() == wdims &&
                  (!lapack_info || (out.tuple_shapes(2).IsArray() &&
                                    out.tuple_shapes(2).element_type() == PrimitiveType::kS32 &&
                                    out.tuple_shapes(2).dimensions() == batch));
  if (ok) return OkStatus();
  return InvalidArgument(fmt::format(
      "eigh ({}): a square {} gives (v [..., n, n], w [..., n]{}), not {}",
      lapack_info ? "syevd" : "Eigh", a.shape().ToString(false),
      lapack_info ? ", info s32[...]" : "", out.ToString(false)));
}

}  // namespace

StatusOr<Literal> Eigh(const Literal& a, const EighOptions& options, bool lapack_info,
                       const Shape& out, const KernelOptions& kopt, int64_t* sweeps) {
  TPUSIM_ASSIGN_OR_RETURN(Batched d, MatrixDims(a, "eigh's operand"));
  TPUSIM_RETURN_IF_ERROR(CheckShapes(a, d, lapack_info, out));
  std::vector<Literal> parts;
  for (const Shape& s : out.tuple_shapes()) {
    TPUSIM_ASSIGN_OR_RETURN(Literal l, Literal::Create(s, kopt.max_bytes));
    parts.push_back(std::move(l));
  }
  const int64_t n = d.rows;
  if (sweeps != nullptr) *sweeps = 0;
  if (n <= 1) {  // v = 1, w = a
    for (int64_t b = 0; b < d.batch * n; ++b) {
      parts[0].SetFromDouble(b, 1);
      parts[1].SetFromDouble(b, a.GetAsDouble(b));
    }
    return Literal::MakeTuple(std::move(parts));
  }
  std::vector<Quads<double>> w(static_cast<size_t>(d.batch)), v(w.size());
  std::vector<double> scale(w.size());
  for (int64_t b = 0; b < d.batch; ++b) {
    const auto u = static_cast<size_t>(b);
    scale[u] = Prepare(a, b, n, options.lower, w[u], v[u]);
  }
  const int64_t k = (n + 1) / 2;
  const int64_t sweep = RunSweeps(w, v, options);
  if (sweeps != nullptr) *sweeps = sweep;
  if (sweeps != nullptr && a.element_type() == PrimitiveType::kF32) {
    // The trips the device's f32 sweeps run (their stopping test sees f32 rounding): the same
    // steps in float, for the count only.
    std::vector<Quads<float>> wf(w.size()), vf(w.size());
    for (int64_t b = 0; b < d.batch; ++b) {
      const auto u = static_cast<size_t>(b);
      Prepare(a, b, n, options.lower, wf[u], vf[u]);
    }
    *sweeps = RunSweeps(wf, vf, options);
  }
  std::vector<double> wv(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t b = 0; b < d.batch; ++b) {
    Quads<double>& q = w[static_cast<size_t>(b)];
    Quads<double>& vq = v[static_cast<size_t>(b)];
    for (int64_t i = 0; i < n; ++i) {
      wv[static_cast<size_t>(i)] = (i < k ? q[kTl].at(i, i) : q[kBr].at(i - k, i - k)) *
                                   scale[static_cast<size_t>(b)];
    }
    std::iota(order.begin(), order.end(), 0);
    if (options.sort_eigenvalues) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        const double p = wv[static_cast<size_t>(x)], r = wv[static_cast<size_t>(y)];
        return p < r || (!std::isnan(p) && std::isnan(r));
      });
    }
    for (int64_t j = 0; j < n; ++j) {  // column j of v: row order[j] of the padded quadrants
      const int64_t src = order[static_cast<size_t>(j)];
      parts[1].SetFromDouble(b * n + j, wv[static_cast<size_t>(src)]);
      for (int64_t i = 0; i < n; ++i) {
        const double e = vq[(src >= k ? 2 : 0) + (i >= k ? 1 : 0)].at(src % k, i % k);
        parts[0].SetFromDouble(b * n * n + i * n + j, e);
      }
    }
  }
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace tpusim::hlo

namespace tpusim::hlo {
namespace {

// gesdd's result shapes for a [..., m, n]: u [..., m, um], vt [..., vn, n] with um in {m, k}
// and vn in {n, k}; `full` when either has the full size and it differs from k.
struct SvdShapes {
  int64_t um = 0, vn = 0;
};

StatusOr<SvdShapes> CheckSvdShapes(const Literal& a, const Batched& d, const Shape& out) {
  const int64_t k = std::min(d.rows, d.cols);
  std::vector<int64_t> batch(a.shape().dimensions().begin(), a.shape().dimensions().end() - 2);
  auto with = [&](std::initializer_list<int64_t> more) {
    std::vector<int64_t> v = batch;
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  SvdShapes s;
  bool ok = out.IsTuple() && out.tuple_shapes().size() == 5;
  if (ok) {
    const Shape& u = out.tuple_shapes(2);
    const Shape& vt = out.tuple_shapes(3);
    ok = u.IsArray() && vt.IsArray() && u.rank() == a.shape().rank() &&
         vt.rank() == a.shape().rank();
    if (ok) {
      s.um = u.dimensions(u.rank() - 1);
      s.vn = vt.dimensions(vt.rank() - 2);
      ok = out.tuple_shapes(0).dimensions() == a.shape().dimensions() &&
           out.tuple_shapes(1).dimensions() == with({k}) &&
           u.dimensions() == with({d.rows, s.um}) && vt.dimensions() == with({s.vn, d.cols}) &&
           (s.um == d.rows || s.um == k) && (s.vn == d.cols || s.vn == k) &&
           out.tuple_shapes(4).element_type() == PrimitiveType::kS32 &&
           out.tuple_shapes(4).dimensions() == batch;
    }
  }
  if (ok) return s;
  return InvalidArgument(fmt::format(
      "svd (gesdd): a {} gives (a, s [..., min(m, n)], u [..., m, m or k], vt [..., n or k, n], "
      "info s32[...]), not {}",
      a.shape().ToString(false), out.ToString(false)));
}

}  // namespace

namespace {

// x [batch, r, r] (or its transpose when `transposed`) holds r x k orthonormal columns c; sets
// its columns k .. r - 1 to those of q = orgqr(geqrf(c)) padded to r x r (JAX's TPU svd's
// completion; the device's expansion builds the same Qr and
// ProductOfElementaryHouseholderReflectors calls).
Status CompleteColumns(Literal& x, int64_t batch, int64_t r, int64_t k, bool transposed,
                       const KernelOptions& kopt) {
  auto at = [&](int64_t b, int64_t i, int64_t j) {
    return transposed ? (b * r + j) * r + i : (b * r + i) * r + j;
  };
  TPUSIM_ASSIGN_OR_RETURN(
      Literal c, Literal::Create(Shape(PrimitiveType::kF64, {batch, r, k}), kopt.max_bytes));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        c.SetFromDouble((b * r + i) * k + j, x.GetAsDouble(at(b, i, j)));
      }
    }
  }
  const Shape qr_shape = Shape::Tuple(
      {Shape(PrimitiveType::kF64, {batch, r, k}), Shape(PrimitiveType::kF64, {batch, k})});
  TPUSIM_ASSIGN_OR_RETURN(Literal qr, Geqrf(c, qr_shape, kopt));
  const Shape square(PrimitiveType::kF64, {batch, r, r});
  TPUSIM_ASSIGN_OR_RETURN(Literal padded, Literal::Create(square, kopt.max_bytes));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        padded.SetFromDouble((b * r + i) * r + j, qr.element(0).GetAsDouble((b * r + i) * k + j));
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal q, HouseholderProduct(padded, qr.element(1), square, kopt));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = k; j < r; ++j) {
        x.SetFromDouble(at(b, i, j), q.GetAsDouble((b * r + i) * r + j));
      }
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<Literal> Gesdd(const Literal& a, const EighOptions& options, bool compute_uv,
                        const Shape& out, const KernelOptions& kopt, int64_t* sweeps) {
  TPUSIM_ASSIGN_OR_RETURN(Batched d, MatrixDims(a, "svd's (gesdd) operand"));
  TPUSIM_ASSIGN_OR_RETURN(const SvdShapes shapes, CheckSvdShapes(a, d, out));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n), big = m + n;
  // The Jordan-Wielandt matrix [[0, a], [a^T, 0]] per matrix, in f64.
  // Of a's type when f32 (its entries are a's, exact), so Eigh also counts the f32 sweeps.
  const PrimitiveType jw_type =
      a.element_type() == PrimitiveType::kF32 ? PrimitiveType::kF32 : PrimitiveType::kF64;
  const Shape jw_shape(jw_type, {d.batch, big, big});
  TPUSIM_ASSIGN_OR_RETURN(Literal jw, Literal::Create(jw_shape, kopt.max_bytes));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double x = a.GetAsDouble((b * m + i) * n + j);
        jw.SetFromDouble((b * big + i) * big + m + j, x);
        jw.SetFromDouble((b * big + m + j) * big + i, x);
      }
    }
  }
  const Shape eig_shape = Shape::Tuple({Shape(PrimitiveType::kF64, {d.batch, big, big}),
                                        Shape(PrimitiveType::kF64, {d.batch, big})});
  TPUSIM_ASSIGN_OR_RETURN(Literal vw, Eigh(jw, options, false, eig_shape, kopt, sweeps));
  const Literal& v = vw.element(0);
  const Literal& w = vw.element(1);
  std::vector<Literal> parts;
  for (const Shape& s : out.tuple_shapes()) {
    TPUSIM_ASSIGN_OR_RETURN(Literal l, Literal::Create(s, kopt.max_bytes));
    parts.push_back(std::move(l));
  }
  for (int64_t i = 0; i < a.element_count(); ++i) parts[0].SetFromDouble(i, a.GetAsDouble(i));
  const double root2 = std::sqrt(2.0);
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t j = 0; j < k; ++j) {  // the j-th largest eigenvalue: column big - 1 - j
      const int64_t col = big - 1 - j;
      parts[1].SetFromDouble(b * k + j, w.GetAsDouble(b * big + col));
      for (int64_t i = 0; i < m; ++i) {
        parts[2].SetFromDouble((b * m + i) * shapes.um + j,
                               root2 * v.GetAsDouble((b * big + i) * big + col));
      }
      for (int64_t p = 0; p < n; ++p) {
        parts[3].SetFromDouble((b * shapes.vn + j) * n + p,
                               root2 * v.GetAsDouble((b * big + m + p) * big + col));
      }
    }
  }
  if (compute_uv && shapes.um > k) {  // u's columns past k: Householder QR's completion
    TPUSIM_RETURN_IF_ERROR(CompleteColumns(parts[2], d.batch, m, k, /*transposed=*/false, kopt));
  }
  if (compute_uv && shapes.vn > k) {  // vt's rows past k: the completion of v = vt^T
    TPUSIM_RETURN_IF_ERROR(CompleteColumns(parts[3], d.batch, n, k, /*transposed=*/true, kopt));
  }
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace tpusim::hlo
