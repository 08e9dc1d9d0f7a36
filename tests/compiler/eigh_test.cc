// Symmetric eigendecomposition (issue 16): JAX's `Eigh` custom-call (TPU lowering) and
// lapack_?syevd_ffi (CPU lowering), read by hlo::GetLapackCall, evaluated by the reference
// (hlo/eval/kernels/eigh.h) and expanded by eigh-expander (compiler/passes/eigh_expander.h) into
// XLA's parallel Jacobi sweeps: a data-dependent while the device runs as real control flow.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/passes/eigh_expander.h"
#include "compiler/passes/lapack_custom_calls.h"
#include "hlo/eval/evaluator.h"
#include "hlo/eval/while_trips.h"
#include "hlo/linalg_options.h"
#include "hlo/while_loop.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

// eigh of a [batch..., n, n] as JAX's TPU lowering writes it (`config`: lower,sort,max_iter,eps),
// or as its CPU lowering does (lapack_ssyevd_ffi, with `uplo`).
std::string EighModule(const std::string& batch, int64_t n, const std::string& source,
                       const std::string& config = "1,1,100,1e-6", char uplo = 0,
                       const std::string& type = "f32") {
  if (uplo != 0) {
    std::string info = batch.empty() ? "s32[]" : "s32[" + batch.substr(0, batch.size() - 1) + "]";
    return fmt::format(R"(HloModule eigh
ENTRY e {{
  a = {4}[{0}{1},{1}] {2}
  g = ({4}[{0}{1},{1}]{{{5}}}, {4}[{0}{1}], {6}) custom-call(a), custom_call_target="lapack_ssyevd_ffi", backend_config={{mode = 86 : ui8, uplo = {3} : ui8}}
  v = {4}[{0}{1},{1}] get-tuple-element(g), index=0
  w = {4}[{0}{1}] get-tuple-element(g), index=1
  ROOT r = ({4}[{0}{1}], {4}[{0}{1},{1}]) tuple(w, v)
}}
)",
                       batch, n, source, static_cast<int>(uplo), type,
                       batch.empty() ? "0,1" : "1,2,0", info);
  }
  return fmt::format(R"(HloModule eigh
ENTRY e {{
  a = {4}[{0}{1},{1}] {2}
  g = ({4}[{0}{1},{1}], {4}[{0}{1}]) custom-call(a), custom_call_target="Eigh", backend_config="{3}"
  v = {4}[{0}{1},{1}] get-tuple-element(g), index=0
  w = {4}[{0}{1}] get-tuple-element(g), index=1
  ROOT r = ({4}[{0}{1}], {4}[{0}{1},{1}]) tuple(w, v)
}}
)",
                     batch, n, source, config, type);
}

TEST(EighTest, ReadsTheCallsOptions) {
  auto tpu = hlo::GetLapackCall("Eigh", "0,1,7,1e-3", "g");
  ASSERT_TRUE(tpu.ok() && tpu->has_value());
  EXPECT_EQ((*tpu)->kind, hlo::LapackCall::Kind::kEigh);
  EXPECT_FALSE((*tpu)->eigh.lower);
  EXPECT_TRUE((*tpu)->eigh.sort_eigenvalues);
  EXPECT_EQ((*tpu)->eigh.max_iter, 7);
  EXPECT_DOUBLE_EQ((*tpu)->eigh.epsilon, 1e-3);
  auto cpu = hlo::GetLapackCall("lapack_dsyevd_ffi", "{mode = 86 : ui8, uplo = 85 : ui8}", "g");
  ASSERT_TRUE(cpu.ok() && cpu->has_value());
  EXPECT_EQ((*cpu)->kind, hlo::LapackCall::Kind::kSyevd);
  EXPECT_FALSE((*cpu)->eigh.lower);
  EXPECT_TRUE((*cpu)->eigh.sort_eigenvalues);
  for (const char* bad : {"1,1,100", "1,1,x,1e-6", "1,1,-1,1e-6", "1,1,100,nan", ""}) {
    auto r = hlo::GetLapackCall("Eigh", bad, "g");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("%g: custom-call Eigh: backend_config"),
              std::string::npos)
        << r.status().message();
  }
  EXPECT_FALSE(hlo::GetLapackCall("lapack_ssyevd_ffi", "{mode = 86 : ui8}", "g").ok());
  EXPECT_FALSE(hlo::GetLapackCall("lapack_ssyevd_ffi", "{mode = 1 : ui8, uplo = 76 : ui8}", "g")
                   .ok());
}

// By hand: [[2, 1], [1, 2]] has eigenvalues 1 and 3, eigenvectors (1, -1) / sqrt 2 and
// (1, 1) / sqrt 2 (up to sign).
TEST(EighTest, KnownAnswerByHand) {
  auto m = testing::Parse(EighModule("", 2, "constant({{2, 1}, {1, 2}})"));
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->element(0).GetAsDouble(0), 1, 1e-6);
  EXPECT_NEAR(r->element(0).GetAsDouble(1), 3, 1e-6);
  const hlo::Literal& v = r->element(1);
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
    auto m = testing::Parse(EighModule("", 4, a, "1,1,100,1e-6", uplo));
    ASSERT_NE(m, nullptr);
    hlo::Evaluator ev;
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

// The symmetric matrix the call decomposes: a's lower (or upper) triangle mirrored.
Eigen::MatrixXd Symmetric(const hlo::Literal& a, int64_t b, int64_t n, bool lower) {
  Eigen::MatrixXd s(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const bool own = lower ? i >= j : i <= j;
      s(i, j) = own ? a.GetAsDouble(b * n * n + i * n + j) : a.GetAsDouble(b * n * n + j * n + i);
    }
  }
  return s;
}

// A V = V diag(w), V^T V = I, w equal to Eigen's eigenvalues (ascending when sorted), for even
// and odd n, a batch, either triangle, sorted or not, TPU and CPU forms.
TEST(EighTest, EvaluatorIsAnEigendecomposition) {
  for (const auto& [batch, n, config, uplo] :
       {std::make_tuple("", 8, "1,1,100,1e-6", 0), std::make_tuple("3,", 5, "0,1,100,1e-6", 0),
        std::make_tuple("", 7, "1,0,100,1e-6", 0), std::make_tuple("2,", 6, "", int{'U'}),
        std::make_tuple("", 9, "", int{'L'})}) {
    SCOPED_TRACE(fmt::format("[{}{}] {} {}", batch, n, config, uplo));
    auto m = testing::Parse(EighModule(batch, n, "parameter(0)", config, static_cast<char>(uplo)));
    ASSERT_NE(m, nullptr);
    auto args = hlo::Evaluator::MakeRandomArguments(*m, 5);
    ASSERT_TRUE(args.ok());
    hlo::Evaluator ev;
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
  auto m = testing::Parse(EighModule("2,", 6, "parameter(0)"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(hlo::DataDependentWhiles(*m, {}), std::vector<std::string>{"g"});
  auto counted = hlo::CountWhileTrips(*m, 1, {"g"}, hlo::WhileTripOptions{});
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  ASSERT_EQ(counted->count("g"), 1u);
  EXPECT_GE(counted->at("g"), 2);
  EXPECT_LE(counted->at("g"), 20);
}

// The expansion's HLO, on the evaluator, gives the call's values to f32 rounding (eigenvector
// signs included); the expanded module has no custom-call, and a while named after the call.
TEST(EighTest, ExpansionAgreesWithTheEvaluator) {
  for (const auto& [batch, n, config, uplo] :
       {std::make_tuple("", 2, "1,1,100,1e-6", 0), std::make_tuple("", 8, "1,1,100,1e-6", 0),
        std::make_tuple("2,", 5, "0,0,100,1e-6", 0), std::make_tuple("", 1, "1,1,100,1e-6", 0),
        std::make_tuple("3,", 4, "", int{'U'})}) {
    SCOPED_TRACE(fmt::format("[{}{}] {} {}", batch, n, config, uplo));
    auto mod =
        testing::Parse(EighModule(batch, n, "parameter(0)", config, static_cast<char>(uplo)));
    ASSERT_NE(mod, nullptr);
    auto args = hlo::Evaluator::MakeRandomArguments(*mod, 3);
    ASSERT_TRUE(args.ok());
    hlo::Evaluator ev;
    auto want = ev.Evaluate(*mod, *args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ASSERT_TRUE(EighExpander().Run(*mod).ok());
    EXPECT_EQ(testing::CountOpcode(*mod, hlo::HloOpcode::kCustomCall), 0);
    if (n > 1) {
      const hlo::HloInstruction* loop = mod->entry_computation()->FindInstruction("g");
      ASSERT_NE(loop, nullptr);
      EXPECT_EQ(loop->opcode(), hlo::HloOpcode::kWhile);
    }
    auto got = ev.Evaluate(*mod, *args);
    ASSERT_TRUE(got.ok()) << got.status().message();
    for (int64_t i = 0; i < want->tuple_size(); ++i) {
      EXPECT_LE(testing::WorstError(got->element(i), want->element(i), 2e-5, 1e-5), 1.0)
          << i << ": got " << got->element(i).ToString() << " want "
          << want->element(i).ToString();
    }
  }
}

// The device runs the sweeps as a branch loop (its count from the evaluator, as `tpusim run`
// does) and its values match the evaluator's.
TEST(EighTest, DeviceRunsTheSweeps) {
  for (const auto& [batch, n] : {std::make_tuple("", 8), std::make_tuple("2,", 5)}) {
    SCOPED_TRACE(fmt::format("[{}{}]", batch, n));
    const std::string text = EighModule(batch, n, "parameter(0)");
    auto mod = testing::Parse(text);
    ASSERT_NE(mod, nullptr);
    auto counted = hlo::CountWhileTrips(*mod, 1, {"g"}, hlo::WhileTripOptions{});
    ASSERT_TRUE(counted.ok()) << counted.status().message();
    CompileOptions options;
    options.branch_trip_counts = *counted;
    const testing::RunResult r =
        testing::CheckAgainstEvaluator(text, "tpu-v4", 2e-5, 1e-5, options);
    EXPECT_EQ(r.compiled.branch_loops.size(), 1u);
  }
}

// jnp.linalg.svd as JAX's CPU lowering writes it (lapack_sgesdd_ffi), u [m, um], vt [vn, n].
std::string SvdModule(const std::string& batch, int64_t m, int64_t n, char mode, int64_t um,
                      int64_t vn) {
  const std::string info =
      batch.empty() ? "s32[]" : "s32[" + batch.substr(0, batch.size() - 1) + "]";
  return fmt::format(R"(HloModule svd
ENTRY e {{
  a = f32[{0}{1},{2}] parameter(0)
  g = (f32[{0}{1},{2}], f32[{0}{3}], f32[{0}{1},{4}], f32[{0}{5},{2}], {7}) custom-call(a), custom_call_target="lapack_sgesdd_ffi", backend_config={{mode = {6} : ui8}}
  s = f32[{0}{3}] get-tuple-element(g), index=1
  u = f32[{0}{1},{4}] get-tuple-element(g), index=2
  vt = f32[{0}{5},{2}] get-tuple-element(g), index=3
  ROOT r = (f32[{0}{3}], f32[{0}{1},{4}], f32[{0}{5},{2}]) tuple(s, u, vt)
}}
)",
                     batch, m, n, std::min(m, n), um, vn, static_cast<int>(mode), info);
}

// a = U diag(s) Vt, U^T U = I, Vt Vt^T = I, s descending and equal to Eigen's; tall, wide and
// square (full), batched; values-only with full-size u and vt.
TEST(EighTest, SvdIsASingularValueDecomposition) {
  for (const auto& [batch, m, n, mode, um, vn] :
       {std::make_tuple("", 6, 4, 'S', 4, 4), std::make_tuple("2,", 3, 5, 'S', 3, 3),
        std::make_tuple("", 5, 5, 'A', 5, 5), std::make_tuple("", 6, 3, 'N', 6, 3),
        std::make_tuple("", 6, 4, 'A', 6, 4), std::make_tuple("2,", 3, 5, 'A', 3, 5)}) {
    SCOPED_TRACE(fmt::format("[{}{},{}] {}", batch, m, n, mode));
    auto mod = testing::Parse(SvdModule(batch, m, n, mode, um, vn));
    ASSERT_NE(mod, nullptr);
    auto args = hlo::Evaluator::MakeRandomArguments(*mod, 9);
    ASSERT_TRUE(args.ok());
    hlo::Evaluator ev;
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

// The expansion's HLO on the evaluator and on the device gives the call's values (signs too).
TEST(EighTest, SvdExpansionAgreesWithTheEvaluator) {
  for (const auto& [batch, m, n, mode, um, vn] :
       {std::make_tuple("", 6, 4, 'S', 4, 4), std::make_tuple("2,", 3, 5, 'S', 3, 3),
        std::make_tuple("", 6, 3, 'N', 6, 3), std::make_tuple("", 6, 4, 'A', 6, 4),
        std::make_tuple("2,", 3, 5, 'A', 3, 5)}) {
    SCOPED_TRACE(fmt::format("[{}{},{}] {}", batch, m, n, mode));
    const std::string text = SvdModule(batch, m, n, mode, um, vn);
    auto mod = testing::Parse(text);
    ASSERT_NE(mod, nullptr);
    auto args = hlo::Evaluator::MakeRandomArguments(*mod, 3);
    ASSERT_TRUE(args.ok());
    hlo::Evaluator ev;
    auto want = ev.Evaluate(*mod, *args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    auto counted = hlo::CountWhileTrips(*mod, 1, {"g"}, hlo::WhileTripOptions{});
    ASSERT_TRUE(counted.ok() && counted->count("g") == 1);
    ASSERT_TRUE(EighExpander().Run(*mod).ok());
    // Full u / vt of a non-square a: the QR completion's Qr and
    // ProductOfElementaryHouseholderReflectors, which lapack-custom-calls expands.
    EXPECT_EQ(testing::CountOpcode(*mod, hlo::HloOpcode::kCustomCall),
              mode == 'A' && m != n ? 2 : 0);
    ASSERT_TRUE(LapackCustomCalls().Run(*mod).ok());
    EXPECT_EQ(testing::CountOpcode(*mod, hlo::HloOpcode::kCustomCall), 0);
    auto got = ev.Evaluate(*mod, *args);
    ASSERT_TRUE(got.ok()) << got.status().message();
    for (int64_t i = 0; i < want->tuple_size(); ++i) {
      EXPECT_LE(testing::WorstError(got->element(i), want->element(i), 2e-5, 1e-5), 1.0)
          << i << ": got " << got->element(i).ToString() << " want "
          << want->element(i).ToString();
    }
    CompileOptions options;
    options.branch_trip_counts = *counted;
    testing::CheckAgainstEvaluator(text, "tpu-v4", 2e-5, 1e-5, options);
  }
}

TEST(EighTest, AMalformedCallIsALocatedError) {
  auto m = testing::Parse(R"(HloModule bad
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT g = (f32[4,3], f32[4]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-6"
}
)");
  ASSERT_NE(m, nullptr);
  auto r = EighExpander().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("test.hlo:4:8: error: %g: custom-call Eigh takes"),
            std::string::npos)
      << r.status().message();
  auto s = testing::Parse(R"(HloModule bad
ENTRY e {
  a = f32[4,4] parameter(0)
  ROOT g = (f32[4,4], f32[4]) custom-call(a), custom_call_target="Eigh", backend_config="1,1"
}
)");
  ASSERT_NE(s, nullptr);
  auto q = EighExpander().Run(*s);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("test.hlo:4:8: error: %g: custom-call Eigh: backend_config"),
            std::string::npos)
      << q.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
