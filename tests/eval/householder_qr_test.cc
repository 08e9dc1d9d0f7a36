// QR on the reference evaluator (issue 16): `Qr` / `ProductOfElementaryHouseholderReflectors`
// of JAX's TPU lowering and lapack_?geqrf_ffi / lapack_?orgqr_ffi of its CPU lowering, evaluated
// by hlo/eval/kernels/householder_qr.h.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"
#include "tests/eval/linalg_modules.h"

namespace tpusim::hlo {
namespace {

using tpusim::testing::QrModule;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

// By hand, a = [[3, 1], [4, 2]]: alpha 3, sigma 16, mu 5, beta -5, tau 1.6, v = [1, 0.5]; column
// 1 becomes [1, 2] - 1.6 v (v . [1, 2] = 2) = [-2.2, 0.4]; the last column has nothing below its
// diagonal (tau 0). q = I - 1.6 v v^T = [[-0.6, -0.8], [-0.8, 0.6]] (jnp.linalg.qr's q and r).
TEST(HouseholderQrTest, KnownAnswerByHand) {
  auto m = Parse(QrModule("", 2, 2, "constant({{3, 1}, {4, 2}})"));
  ASSERT_NE(m, nullptr);
  Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto near = [](const Literal& l, const std::vector<double>& want) {
    ASSERT_EQ(l.element_count(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(l.GetAsDouble(i), want[i], 1e-6) << i;
  };
  near(r->element(0), {-0.6, -0.8, -0.8, 0.6});
  near(r->element(1), {-5, -2.2, 0.5, 0.4});
  near(r->element(2), {1.6, 0});
}

// A tall 4x3 against jnp.linalg.qr (JAX 0.10.2 on the CPU, LAPACK) to f32 rounding.
TEST(HouseholderQrTest, MatchesJaxOnATallMatrix) {
  auto m = Parse(
      QrModule("", 4, 3, "constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 10}, {1, 0, 1}})"));
  ASSERT_NE(m, nullptr);
  Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<double> q = {-0.12216949, 0.56427658,  0.81229150,  -0.48867780,
                                 0.23175646,  -0.15017167, -0.85518616, -0.10076368,
                                 -0.10921551, -0.12216945, -0.78595650, 0.55290425};
  const std::vector<double> rr = {-8.18535328, -9.52921677, -11.97260571, 1.48122585,
                                  1.28977513, 0.99659300};
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(r->element(0).GetAsDouble(i), q[i], 2e-6);
  const std::vector<std::pair<int, int>> upper = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
  for (size_t i = 0; i < upper.size(); ++i) {
    EXPECT_NEAR(r->element(1).GetAsDouble(upper[i].first * 3 + upper[i].second), rr[i], 1e-5);
  }
}

}  // namespace
}  // namespace tpusim::hlo
