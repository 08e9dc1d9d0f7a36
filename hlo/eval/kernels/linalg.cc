#include "hlo/eval/kernels/linalg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tpusim::hlo {

StatusOr<Batched> MatrixDims(const Literal& x, const char* what) {
  const Shape& s = x.shape();
  if (!x.IsArray() || s.rank() < 2 || !IsFloatingPoint(s.element_type())) {
    return InvalidArgument(fmt::format("{} must be a floating-point [..., m, n], got {}", what,
                                       s.ToString(false)));
  }
  Batched b;
  for (int64_t d = 0; d + 2 < s.rank(); ++d) b.batch *= s.dimensions(d);
  b.rows = s.dimensions(s.rank() - 2);
  b.cols = s.dimensions(s.rank() - 1);
  return b;
}

namespace {

// Lower-triangular factor of the n x n matrix at `base` (read through `at(i, j)`, i >= j) into l;
// false when a pivot is negative or NaN.
template <typename At>
bool FactorLower(int64_t n, At at, std::vector<double>& l) {
  l.assign(static_cast<size_t>(n * n), 0.0);
  auto L = [&](int64_t i, int64_t j) -> double& { return l[static_cast<size_t>(i * n + j)]; };
  for (int64_t j = 0; j < n; ++j) {
    double d = at(j, j);
    for (int64_t k = 0; k < j; ++k) d -= L(j, k) * L(j, k);
    const double s = std::sqrt(d);
    if (std::isnan(s)) return false;
    L(j, j) = s;
    for (int64_t i = j + 1; i < n; ++i) {
      double v = at(i, j);
      for (int64_t k = 0; k < j; ++k) v -= L(i, k) * L(j, k);
      L(i, j) = v / s;
    }
  }
  return true;
}

}  // namespace

StatusOr<Literal> Cholesky(const Literal& a, const CholeskyOptions& options, const Shape& out,
                           const KernelOptions& kopt) {
  TPUSIM_ASSIGN_OR_RETURN(Batched d, MatrixDims(a, "cholesky's operand"));
  if (d.rows != d.cols || out.dimensions() != a.shape().dimensions()) {
    return InvalidArgument(fmt::format("cholesky: operand {} is not [..., n, n] or result {} "
                                       "differs",
                                       a.shape().ToString(false), out.ToString(false)));
  }
  const int64_t n = d.rows;
  TPUSIM_ASSIGN_OR_RETURN(Literal r, Literal::Create(out, kopt.max_bytes));
  std::vector<double> l;
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t base = b * n * n;
    // upper: a = u^T u; u^T is the lower factor of a read from its upper triangle.
    auto at = [&](int64_t i, int64_t j) {
      return a.GetAsDouble(base + (options.lower ? i * n + j : j * n + i));
    };
    const bool ok = FactorLower(n, at, l);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double v = !ok ? std::numeric_limits<double>::quiet_NaN()
                             : (options.lower ? l[static_cast<size_t>(i * n + j)]
                                              : l[static_cast<size_t>(j * n + i)]);
        r.SetFromDouble(base + i * n + j, v);
      }
    }
  }
  return r;
}

StatusOr<Literal> TriangularSolve(const Literal& a, const Literal& b,
                                  const TriangularSolveOptions& options, const Shape& out,
                                  const KernelOptions& kopt) {
  TPUSIM_ASSIGN_OR_RETURN(Batched da, MatrixDims(a, "triangular-solve's a"));
  TPUSIM_ASSIGN_OR_RETURN(Batched db, MatrixDims(b, "triangular-solve's b"));
  const int64_t k = da.rows;
  if (da.rows != da.cols || da.batch != db.batch ||
      (options.left_side ? db.rows : db.cols) != k ||
      out.dimensions() != b.shape().dimensions()) {
    return InvalidArgument(fmt::format("triangular-solve: a {} and b {} do not fit (result {})",
                                       a.shape().ToString(false), b.shape().ToString(false),
                                       out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal r, Literal::Create(out, kopt.max_bytes));
  // M = op(triangle(a)) as a dense k x k matrix; it is lower triangular when lower != transposed.
  // Left: M x = b column by column. Right: x M = b, i.e. M^T x^T = b^T row by row, M^T lower
  // triangular when M is upper.
  const bool m_lower = options.lower != options.transposed();
  const bool solve_lower = options.left_side ? m_lower : !m_lower;
  std::vector<double> m(static_cast<size_t>(k * k)), x(static_cast<size_t>(k));
  for (int64_t batch = 0; batch < da.batch; ++batch) {
    const int64_t abase = batch * k * k, bbase = batch * db.rows * db.cols;
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        // Element (i, j) of the solved-with matrix S (M on the left, M^T on the right) comes from
        // a(p, q) of a's stored triangle.
        const bool flip = options.transposed() != !options.left_side;
        const int64_t p = flip ? j : i, q = flip ? i : j;
        const bool in = options.lower ? q <= p : q >= p;
        double v = in ? a.GetAsDouble(abase + p * k + q) : 0.0;
        if (p == q && options.unit_diagonal) v = 1.0;
        m[static_cast<size_t>(i * k + j)] = v;
      }
    }
    const int64_t systems = options.left_side ? db.cols : db.rows;
    for (int64_t s = 0; s < systems; ++s) {
      auto bidx = [&](int64_t i) {
        return bbase + (options.left_side ? i * db.cols + s : s * db.cols + i);
      };
      for (int64_t t = 0; t < k; ++t) {
        const int64_t i = solve_lower ? t : k - 1 - t;
        double v = b.GetAsDouble(bidx(i));
        for (int64_t u = 0; u < t; ++u) {
          const int64_t j = solve_lower ? u : k - 1 - u;
          v -= m[static_cast<size_t>(i * k + j)] * x[static_cast<size_t>(j)];
        }
        x[static_cast<size_t>(i)] = v / m[static_cast<size_t>(i * k + i)];
      }
      for (int64_t i = 0; i < k; ++i) r.SetFromDouble(bidx(i), x[static_cast<size_t>(i)]);
    }
  }
  return r;
}

namespace {

// One matrix of LuFactor in type T (row-major m x n at `x`), its pivots (p + 1) and info.
template <typename T>
void LuSteps(T* x, int64_t m, int64_t n, int32_t* ipiv, int32_t* info) {
  auto at = [&](int64_t i, int64_t j) -> T& { return x[i * n + j]; };
  *info = 0;
  std::vector<T> rowk(static_cast<size_t>(n)), rowp(static_cast<size_t>(n));
  for (int64_t k = 0; k < std::min(m, n); ++k) {
    T mx = T(0);
    for (int64_t i = k; i < m; ++i) {
      const T v = std::abs(at(i, k));
      mx = (std::isnan(mx) || std::isnan(v)) ? std::numeric_limits<T>::quiet_NaN()
                                             : std::max(mx, v);
    }
    int64_t p = m;
    for (int64_t i = k; i < m; ++i) {
      if (std::abs(at(i, k)) == mx) {
        p = i;
        break;
      }
    }
    ipiv[k] = static_cast<int32_t>(p + 1);
    for (int64_t j = 0; j < n; ++j) {
      rowk[static_cast<size_t>(j)] = at(k, j);
      T v = T(0);
      for (int64_t i = 0; i < m; ++i) v = v + (i == p ? at(i, j) : T(0));
      rowp[static_cast<size_t>(j)] = v;
    }
    for (int64_t j = 0; j < n; ++j) {
      at(k, j) = rowp[static_cast<size_t>(j)];
      if (p < m && p != k) at(p, j) = rowk[static_cast<size_t>(j)];
    }
    const T pivot = at(k, k);
    if (*info == 0 && pivot == T(0)) *info = static_cast<int32_t>(k + 1);
    for (int64_t i = k + 1; i < m; ++i) {
      if (pivot != T(0)) at(i, k) = at(i, k) / pivot;
    }
    for (int64_t i = k + 1; i < m; ++i) {
      for (int64_t j = k + 1; j < n; ++j) {
        const T prod = at(i, k) * at(k, j);
        at(i, j) = at(i, j) - prod;
      }
    }
  }
}

template <typename T>
void LuBatches(const Literal& a, Literal& lu, Literal& ipiv, Literal& info, const Batched& d) {
  const int64_t steps = std::min(d.rows, d.cols);
  std::copy(a.data<T>(), a.data<T>() + a.element_count(), lu.mutable_data<T>());
  for (int64_t b = 0; b < d.batch; ++b) {
    LuSteps<T>(lu.mutable_data<T>() + b * d.rows * d.cols, d.rows, d.cols,
               ipiv.mutable_data<int32_t>() + b * steps, info.mutable_data<int32_t>() + b);
  }
}

}  // namespace

StatusOr<Literal> LuFactor(const Literal& a, const Shape& out, const KernelOptions& kopt) {
  TPUSIM_ASSIGN_OR_RETURN(Batched d, MatrixDims(a, "getrf's operand"));
  const PrimitiveType t = a.element_type();
  std::vector<int64_t> batch(a.shape().dimensions().begin(), a.shape().dimensions().end() - 2);
  std::vector<int64_t> piv = batch;
  piv.push_back(std::min(d.rows, d.cols));
  auto is = [](const Shape& s, PrimitiveType type, const std::vector<int64_t>& dims) {
    return s.IsArray() && s.element_type() == type && s.dimensions() == dims;
  };
  const bool ok = (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) && out.IsTuple() &&
                  out.tuple_shapes().size() == 3 &&
                  is(out.tuple_shapes(0), t, a.shape().dimensions()) &&
                  is(out.tuple_shapes(1), PrimitiveType::kS32, piv) &&
                  is(out.tuple_shapes(2), PrimitiveType::kS32, batch);
  if (!ok) {
    return InvalidArgument(fmt::format(
        "getrf: operand {} must be f32 or f64 [..., m, n] and the result (lu, s32 pivots "
        "[..., min(m, n)], s32 info [...]), got {}",
        a.shape().ToString(false), out.ToString(false)));
  }
  std::vector<Literal> parts;
  for (const Shape& s : out.tuple_shapes()) {
    TPUSIM_ASSIGN_OR_RETURN(Literal part, Literal::Create(s, kopt.max_bytes));
    parts.push_back(std::move(part));
  }
  if (t == PrimitiveType::kF32) {
    LuBatches<float>(a, parts[0], parts[1], parts[2], d);
  } else {
    LuBatches<double>(a, parts[0], parts[1], parts[2], d);
  }
  return Literal::MakeTuple(std::move(parts));
}

StatusOr<Literal> LuDecomposition(const Literal& a, const Shape& out, const KernelOptions& kopt) {
  const Shape& as = a.shape();
  const bool ok = as.IsArray() && as.rank() >= 2 && out.IsTuple() &&
                  out.tuple_shapes().size() == 3 && out.tuple_shapes(2).IsArray() &&
                  out.tuple_shapes(2).element_type() == PrimitiveType::kS32 &&
                  out.tuple_shapes(2).rank() == as.rank() - 1;
  if (!ok) {
    return InvalidArgument(fmt::format(
        "LuDecomposition: operand {} must be f32 or f64 [..., m, n] and the result (lu, s32 "
        "pivots [..., min(m, n)], s32 permutation [..., m]), got {}",
        as.ToString(false), out.ToString(false)));
  }
  std::vector<int64_t> batch(as.dimensions().begin(), as.dimensions().end() - 2);
  Shape getrf = out;
  getrf.mutable_tuple_shapes()[2] = Shape(PrimitiveType::kS32, batch);
  TPUSIM_ASSIGN_OR_RETURN(Literal factored, LuFactor(a, getrf, kopt));
  TPUSIM_ASSIGN_OR_RETURN(Literal perm, Literal::Create(out.tuple_shapes(2), kopt.max_bytes));
  const int64_t m = as.dimensions(as.rank() - 2);
  const int64_t steps = std::min(m, as.dimensions(as.rank() - 1));
  const int64_t matrices = m > 0 ? perm.element_count() / m : 0;
  int32_t* piv = factored.mutable_element(1).mutable_data<int32_t>();
  int32_t* pm = perm.mutable_data<int32_t>();
  for (int64_t b = 0; b < matrices; ++b) {
    int32_t* row = pm + b * m;
    for (int64_t i = 0; i < m; ++i) row[i] = static_cast<int32_t>(i);
    for (int64_t k = 0; k < steps; ++k) {
      int32_t& p = piv[b * steps + k];
      p -= 1;
      if (p >= 0 && p < m) std::swap(row[k], row[p]);
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(factored.mutable_element(0)));
  parts.push_back(std::move(factored.mutable_element(1)));
  parts.push_back(std::move(perm));
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace tpusim::hlo
