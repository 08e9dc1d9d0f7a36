// Symmetric eigendecomposition and SVD on the reference evaluator (issue 16): JAX's `Eigh`
// custom-call (TPU lowering), lapack_?syevd_ffi and lapack_?gesdd_ffi (CPU lowering), read by
// GetLapackCall (hlo/linalg_options.h) and evaluated by hlo/eval/kernels/eigh.h; the sweeps
// the evaluator counts for a call (hlo/eval/while_trips.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "hlo/eval/while_trips.h"
#include "hlo/linalg_options.h"
#include "hlo/parser.h"
#include "hlo/while_loop.h"
#include "tests/eval/linalg_modules.h"

namespace tpusim::hlo {
namespace {

using tpusim::testing::EighModule;
using tpusim::testing::SvdModule;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

// The symmetric matrix the call decomposes: a's lower (or upper) triangle mirrored.
Eigen::MatrixXd Symmetric(const Literal& a, int64_t b, int64_t n, bool lower) {
  Eigen::MatrixXd s(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const bool own = lower ? i >= j : i <= j;
      s(i, j) = own ? a.GetAsDouble(b * n * n + i * n + j) : a.GetAsDouble(b * n * n + j * n + i);
    }
  }
  return s;
}

TEST(EighTest, ReadsTheCallsOptions) {
  auto tpu = GetLapackCall("Eigh", "0,1,7,1e-3", "g");
  ASSERT_TRUE(tpu.ok() && tpu->has_value());
  EXPECT_EQ((*tpu)->kind, LapackCall::Kind::kEigh);
  EXPECT_FALSE((*tpu)->eigh.lower);
  EXPECT_TRUE((*tpu)->eigh.sort_eigenvalues);
  EXPECT_EQ((*tpu)->eigh.max_iter, 7);
  EXPECT_DOUBLE_EQ((*tpu)->eigh.epsilon, 1e-3);
  auto cpu = GetLapackCall("lapack_dsyevd_ffi", "{mode = 86 : ui8, uplo = 85 : ui8}", "g");
  ASSERT_TRUE(cpu.ok() && cpu->has_value());
  EXPECT_EQ((*cpu)->kind, LapackCall::Kind::kSyevd);
  EXPECT_FALSE((*cpu)->eigh.lower);
  EXPECT_TRUE((*cpu)->eigh.sort_eigenvalues);
  for (const char* bad : {"1,1,100", "1,1,x,1e-6", "1,1,-1,1e-6", "1,1,100,nan", ""}) {
    auto r = GetLapackCall("Eigh", bad, "g");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("%g: custom-call Eigh: backend_config"),
              std::string::npos)
        << r.status().message();
  }
  EXPECT_FALSE(GetLapackCall("lapack_ssyevd_ffi", "{mode = 86 : ui8}", "g").ok());
  EXPECT_FALSE(GetLapackCall("lapack_ssyevd_ffi", "{mode = 1 : ui8, uplo = 76 : ui8}", "g")
                   .ok());
}

// By hand: [[2, 1], [1, 2]] has eigenvalues 1 and 3, eigenvectors (1, -1) / sqrt 2 and
// (1, 1) / sqrt 2 (up to sign).
TEST(EighTest, KnownAnswerByHand) {
  auto m = Parse(EighModule("", 2, "constant({{2, 1}, {1, 2}})"));
  ASSERT_NE(m, nullptr);
  Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->element(0).GetAsDouble(0), 1, 1e-6);
  EXPECT_NEAR(r->element(0).GetAsDouble(1), 3, 1e-6);
  const Literal& v = r->element(1);
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(std::abs(v.GetAsDouble(i)), std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(v.GetAsDouble(0), -v.GetAsDouble(2), 1e-6);  // column 0 is (1, -1)
  EXPECT_NEAR(v.GetAsDouble(1), v.GetAsDouble(3), 1e-6);   // column 1 is (1, 1)
}

// A 4x4 against jnp.linalg.eigh (JAX 0.10.2: the same eigenvalues from its CPU and TPU lowering;
// eigenvectors compared up to sign, the sign LAPACK and the Jacobi method choose differing).
TEST(EighTest, MatchesJax) {
  const std::string a = "constant({{4, 1, 2, 0}, {1, 3, 0, 1}, {2, 0, 5, 1}, {0, 1, 1, 2}})";
  const std::vector<double> w = {0.8121636, 2.7838233, 3.548378, 6.8556347};
  const std::vector<double> v = {-0.37182662, 0.6763547,  0.21817194, -0.59723574,
                                 0.49282187,  -0.17754894, 0.826552,   -0.20594853,
                                 0.3462504,   -0.32250884, -0.46254158, -0.74976933,
                                 -0.706387,   -0.6379725,  0.2350914,  -0.1968265};
  for (char uplo : {'\0', 'L', 'U'}) {
    auto m = Parse(EighModule("", 4, a, "1,1,100,1e-6", uplo));
    ASSERT_NE(m, nullptr);
    Evaluator ev;
    auto r = ev.Evaluate(*m, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(r->element(0).GetAsDouble(j), w[static_cast<size_t>(j)], 2e-6) << j;
      const double sign = r->element(1).GetAsDouble(j) * v[static_cast<size_t>(j)] < 0 ? -1 : 1;
      for (int64_t i = 0; i < 4; ++i) {
        EXPECT_NEAR(sign * r->element(1).GetAsDouble(i * 4 + j), v[static_cast<size_t>(i * 4 + j)],
                    2e-6)
            << i << "," << j;
      }
    }
  }
}

// A V = V diag(w), V^T V = I, w equal to Eigen's eigenvalues (ascending when sorted), for even
// and odd n, a batch, either triangle, sorted or not, TPU and CPU forms.
TEST(EighTest, EvaluatorIsAnEigendecomposition) {
  for (const auto& [batch, n, config, uplo] :
       {std::make_tuple("", 8, "1,1,100,1e-6", 0), std::make_tuple("3,", 5, "0,1,100,1e-6", 0),
        std::make_tuple("", 7, "1,0,100,1e-6", 0), std::make_tuple("2,", 6, "", int{'U'}),
        std::make_tuple("", 9, "", int{'L'})}) {
    SCOPED_TRACE(fmt::format("[{}{}] {} {}", batch, n, config, uplo));
    auto m = Parse(EighModule(batch, n, "parameter(0)", config, static_cast<char>(uplo)));
    ASSERT_NE(m, nullptr);
    auto args = Evaluator::MakeRandomArguments(*m, 5);
    ASSERT_TRUE(args.ok());
    Evaluator ev;
    auto r = ev.Evaluate(*m, *args);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const bool lower = uplo == 0 ? config[0] == '1' : uplo == 'L';
    const bool sorted = uplo != 0 || config[2] == '1';
    const int64_t batches = (*args)[0].element_count() / (n * n);
    for (int64_t b = 0; b < batches; ++b) {
      const Eigen::MatrixXd a = Symmetric((*args)[0], b, n, lower);
      Eigen::MatrixXd v(n, n);
      Eigen::VectorXd w(n);
      for (int64_t i = 0; i < n; ++i) {
        w(i) = r->element(0).GetAsDouble(b * n + i);
        for (int64_t j = 0; j < n; ++j) v(i, j) = r->element(1).GetAsDouble(b * n * n + i * n + j);
      }
      const double norm = a.norm();
      EXPECT_LE((a * v - v * w.asDiagonal()).norm(), 1e-5 * norm);
      EXPECT_LE((v.transpose() * v - Eigen::MatrixXd::Identity(n, n)).norm(), 1e-5);
      Eigen::VectorXd want = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(a).eigenvalues();
      Eigen::VectorXd got = w;
      if (sorted) {
        for (int64_t i = 1; i < n; ++i) EXPECT_LE(w(i - 1), w(i));
      } else {
        std::sort(got.data(), got.data() + n);
      }
      EXPECT_LE((got - want).cwiseAbs().maxCoeff(), 1e-6 * norm);
    }
  }
}

// The call's sweeps are what the evaluator counts for it, under the call's name, as for a while.
TEST(EighTest, EvaluatorCountsTheSweeps) {
  auto m = Parse(EighModule("2,", 6, "parameter(0)"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(DataDependentWhiles(*m, {}), std::vector<std::string>{"g"});
  auto counted = CountWhileTrips(*m, 1, {"g"}, WhileTripOptions{});
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  ASSERT_EQ(counted->count("g"), 1u);
  EXPECT_GE(counted->at("g"), 2);
  EXPECT_LE(counted->at("g"), 20);
}

// a = U diag(s) Vt, U^T U = I, Vt Vt^T = I, s descending and equal to Eigen's; tall, wide and
// square (full), batched; values-only with full-size u and vt.
TEST(EighTest, SvdIsASingularValueDecomposition) {
  for (const auto& [batch, m, n, mode, um, vn] :
       {std::make_tuple("", 6, 4, 'S', 4, 4), std::make_tuple("2,", 3, 5, 'S', 3, 3),
        std::make_tuple("", 5, 5, 'A', 5, 5), std::make_tuple("", 6, 3, 'N', 6, 3),
        std::make_tuple("", 6, 4, 'A', 6, 4), std::make_tuple("2,", 3, 5, 'A', 3, 5)}) {
    SCOPED_TRACE(fmt::format("[{}{},{}] {}", batch, m, n, mode));
    auto mod = Parse(SvdModule(batch, m, n, mode, um, vn));
    ASSERT_NE(mod, nullptr);
    auto args = Evaluator::MakeRandomArguments(*mod, 9);
    ASSERT_TRUE(args.ok());
    Evaluator ev;
    auto r = ev.Evaluate(*mod, *args);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const int64_t k = std::min(m, n), batches = (*args)[0].element_count() / (m * n);
    for (int64_t b = 0; b < batches; ++b) {
      Eigen::MatrixXd a(m, n), u(m, k), vt(k, n);
      Eigen::VectorXd sv(k);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) a(i, j) = (*args)[0].GetAsDouble((b * m + i) * n + j);
      }
      for (int64_t j = 0; j < k; ++j) sv(j) = r->element(0).GetAsDouble(b * k + j);
      const Eigen::VectorXd want = Eigen::JacobiSVD<Eigen::MatrixXd>(a).singularValues();
      EXPECT_LE((sv - want).cwiseAbs().maxCoeff(), 1e-5 * a.norm());
      for (int64_t j = 1; j < k; ++j) EXPECT_GE(sv(j - 1), sv(j));
      if (mode == 'N') continue;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < k; ++j) u(i, j) = r->element(1).GetAsDouble((b * m + i) * um + j);
      }
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < n; ++j) vt(i, j) = r->element(2).GetAsDouble((b * vn + i) * n + j);
      }
      EXPECT_LE((u * sv.asDiagonal() * vt - a).norm(), 1e-5 * a.norm());
      EXPECT_LE((u.transpose() * u - Eigen::MatrixXd::Identity(k, k)).norm(), 1e-5);
      EXPECT_LE((vt * vt.transpose() - Eigen::MatrixXd::Identity(k, k)).norm(), 1e-5);
      // Full u / vt: orthogonal (the columns past k complete the basis).
      Eigen::MatrixXd uf(m, um), vf(vn, n);
      for (int64_t i = 0; i < m * um; ++i) {
        uf(i / um, i % um) = r->element(1).GetAsDouble(b * m * um + i);
      }
      for (int64_t i = 0; i < vn * n; ++i) {
        vf(i / n, i % n) = r->element(2).GetAsDouble(b * vn * n + i);
      }
      EXPECT_LE((uf.transpose() * uf - Eigen::MatrixXd::Identity(um, um)).norm(), 1e-5);
      EXPECT_LE((vf * vf.transpose() - Eigen::MatrixXd::Identity(vn, vn)).norm(), 1e-5);
    }
  }
}

}  // namespace
}  // namespace tpusim::hlo
