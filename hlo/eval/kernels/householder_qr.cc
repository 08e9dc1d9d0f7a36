#include "hlo/eval/kernels/householder_qr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hlo/eval/kernels/linalg.h"

namespace tpusim::hlo {
namespace {

// One matrix (row-major m x n in `x`): the reflectors in place, their taus into `tau`.
void GeqrfSteps(std::vector<double>& x, int64_t m, int64_t n, double* tau) {
  auto at = [&](int64_t i, int64_t j) -> double& { return x[static_cast<size_t>(i * n + j)]; };
  for (int64_t k = 0; k < std::min(m, n); ++k) {
    const double alpha = at(k, k);
    double sigma = 0;
    for (int64_t i = k + 1; i < m; ++i) sigma += at(i, k) * at(i, k);
    const double mu = std::sqrt(alpha * alpha + sigma);
    const bool flat = sigma == 0;
    const double beta = flat ? alpha : (alpha < 0 ? mu : -mu);
    const double t = flat ? 0 : (beta - alpha) / beta;
    const double divisor = flat ? 1 : alpha - beta;
    for (int64_t i = k + 1; i < m; ++i) at(i, k) /= divisor;
    at(k, k) = beta;
    tau[k] = t;
    for (int64_t j = k + 1; j < n; ++j) {
      double w = at(k, j);
      for (int64_t i = k + 1; i < m; ++i) w += at(i, k) * at(i, j);
      at(k, j) -= t * w;
      for (int64_t i = k + 1; i < m; ++i) at(i, j) -= t * at(i, k) * w;
    }
  }
}

}  // namespace

StatusOr<Literal> Geqrf(const Literal& a, const Shape& out, const KernelOptions& kopt) {
  TPUSIM_ASSIGN_OR_RETURN(Batched d, MatrixDims(a, "geqrf's (Qr) operand"));
  const int64_t steps = std::min(d.rows, d.cols);
  std::vector<int64_t> tdims(a.shape().dimensions().begin(), a.shape().dimensions().end() - 2);
  tdims.push_back(steps);
  if (!out.IsTuple() || out.tuple_shapes().size() != 2 ||
      !out.tuple_shapes(0).IsArray() || !out.tuple_shapes(1).IsArray() ||
      out.tuple_shapes(0).dimensions() != a.shape().dimensions() ||
      out.tuple_shapes(1).dimensions() != tdims) {
    return InvalidArgument(fmt::format("geqrf (Qr): operand {} gives (a [..., m, n], taus [..., "
                                       "min(m, n)]), not {}",
                                       a.shape().ToString(false), out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal r, Literal::Create(out.tuple_shapes(0), kopt.max_bytes));
  TPUSIM_ASSIGN_OR_RETURN(Literal taus, Literal::Create(out.tuple_shapes(1), kopt.max_bytes));
  std::vector<double> x(static_cast<size_t>(d.rows * d.cols)), tau(static_cast<size_t>(steps));
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t base = b * d.rows * d.cols;
    for (int64_t i = 0; i < d.rows * d.cols; ++i) x[static_cast<size_t>(i)] = a.GetAsDouble(base + i);
    GeqrfSteps(x, d.rows, d.cols, tau.data());
    for (int64_t i = 0; i < d.rows * d.cols; ++i) r.SetFromDouble(base + i, x[static_cast<size_t>(i)]);
    for (int64_t k = 0; k < steps; ++k) taus.SetFromDouble(b * steps + k, tau[static_cast<size_t>(k)]);
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(r));
  parts.push_back(std::move(taus));
  return Literal::MakeTuple(std::move(parts));
}

StatusOr<Literal> HouseholderProduct(const Literal& a, const Literal& taus, const Shape& out,
                                     const KernelOptions& kopt) {
  TPUSIM_ASSIGN_OR_RETURN(
      Batched d, MatrixDims(a, "orgqr's (ProductOfElementaryHouseholderReflectors) operand"));
  const Shape& ts = taus.shape();
  const int64_t t = ts.rank() >= 1 ? ts.dimensions(ts.rank() - 1) : -1;
  if (!taus.IsArray() || ts.rank() != a.shape().rank() - 1 || t > std::min(d.rows, d.cols) ||
      !out.IsArray() || out.dimensions() != a.shape().dimensions()) {
    return InvalidArgument(fmt::format(
        "orgqr (ProductOfElementaryHouseholderReflectors): a {} and taus {} (at most min(m, n) "
        "per matrix) give q of a's shape, not {}",
        a.shape().ToString(false), ts.ToString(false), out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal q, Literal::Create(out, kopt.max_bytes));
  std::vector<double> y(static_cast<size_t>(d.rows * d.cols)), v(static_cast<size_t>(d.rows));
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t base = b * d.rows * d.cols;
    auto Y = [&](int64_t i, int64_t j) -> double& { return y[static_cast<size_t>(i * d.cols + j)]; };
    for (int64_t i = 0; i < d.rows; ++i) {
      for (int64_t j = 0; j < d.cols; ++j) Y(i, j) = i == j ? 1.0 : 0.0;
    }
    for (int64_t k = t - 1; k >= 0; --k) {
      const double tau = taus.GetAsDouble(b * t + k);
      v[static_cast<size_t>(k)] = 1.0;
      for (int64_t i = k + 1; i < d.rows; ++i) {
        v[static_cast<size_t>(i)] = a.GetAsDouble(base + i * d.cols + k);
      }
      for (int64_t j = 0; j < d.cols; ++j) {
        double w = 0;
        for (int64_t i = k; i < d.rows; ++i) w += v[static_cast<size_t>(i)] * Y(i, j);
        for (int64_t i = k; i < d.rows; ++i) Y(i, j) -= tau * v[static_cast<size_t>(i)] * w;
      }
    }
    for (int64_t i = 0; i < d.rows * d.cols; ++i) q.SetFromDouble(base + i, y[static_cast<size_t>(i)]);
  }
  return q;
}

}  // namespace tpusim::hlo
