// QR custom-calls (issue 16): `Qr` / `ProductOfElementaryHouseholderReflectors` of JAX's TPU
// lowering and lapack_?geqrf_ffi / lapack_?orgqr_ffi of its CPU lowering, read by the evaluator
// (hlo/eval/kernels/householder_qr.h) and expanded by lapack-custom-calls
// (compiler/passes/householder_qr_expansion.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/passes/lapack_custom_calls.h"
#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

// q and r of jnp.linalg.qr as JAX's TPU lowering writes it (r: the upper triangle of geqrf's a).
std::string QrModule(const std::string& batch, int64_t m, int64_t n, const std::string& source,
                     const char* geqrf = "Qr",
                     const char* orgqr = "ProductOfElementaryHouseholderReflectors") {
  const int64_t k = std::min(m, n);
  return fmt::format(R"(HloModule qr
ENTRY e {{
  a = f32[{0}{1},{2}] {4}
  g = (f32[{0}{1},{2}], f32[{0}{3}]) custom-call(a), custom_call_target="{5}"
  f = f32[{0}{1},{2}] get-tuple-element(g), index=0
  t = f32[{0}{3}] get-tuple-element(g), index=1
  q = f32[{0}{1},{2}] custom-call(f, t), custom_call_target="{6}"
  ROOT r = (f32[{0}{1},{2}], f32[{0}{1},{2}], f32[{0}{3}]) tuple(q, f, t)
}}
)",
                     batch, m, n, k, source, geqrf, orgqr);
}

// By hand, a = [[3, 1], [4, 2]]: alpha 3, sigma 16, mu 5, beta -5, tau 1.6, v = [1, 0.5]; column
// 1 becomes [1, 2] - 1.6 v (v . [1, 2] = 2) = [-2.2, 0.4]; the last column has nothing below its
// diagonal (tau 0). q = I - 1.6 v v^T = [[-0.6, -0.8], [-0.8, 0.6]] (jnp.linalg.qr's q and r).
TEST(HouseholderQrTest, KnownAnswerByHand) {
  auto m = testing::Parse(QrModule("", 2, 2, "constant({{3, 1}, {4, 2}})"));
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto near = [](const hlo::Literal& l, const std::vector<double>& want) {
    ASSERT_EQ(l.element_count(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(l.GetAsDouble(i), want[i], 1e-6) << i;
  };
  near(r->element(0), {-0.6, -0.8, -0.8, 0.6});
  near(r->element(1), {-5, -2.2, 0.5, 0.4});
  near(r->element(2), {1.6, 0});
}

// A tall 4x3 against jnp.linalg.qr (JAX 0.10.2 on the CPU, LAPACK) to f32 rounding.
TEST(HouseholderQrTest, MatchesJaxOnATallMatrix) {
  auto m = testing::Parse(
      QrModule("", 4, 3, "constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 10}, {1, 0, 1}})"));
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
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

// The expansion computes the evaluator's formulas in f32 (sums in another order): square, tall,
// wide and batched, for the TPU and the CPU targets; and the device runs it.
TEST(HouseholderQrTest, ExpansionAgreesWithTheEvaluator) {
  for (const auto& [batch, m, n] : {std::make_tuple("", 6, 6), std::make_tuple("2,", 5, 3),
                                    std::make_tuple("", 3, 5)}) {
    for (bool cpu : {false, true}) {
      SCOPED_TRACE(fmt::format("[{}{},{}] {}", batch, m, n, cpu ? "lapack" : "tpu"));
      const std::string text =
          cpu ? QrModule(batch, m, n, "parameter(0)", "lapack_sgeqrf_ffi", "lapack_sorgqr_ffi")
              : QrModule(batch, m, n, "parameter(0)");
      auto mod = testing::Parse(text);
      ASSERT_NE(mod, nullptr);
      auto args = hlo::Evaluator::MakeRandomArguments(*mod, 3);
      ASSERT_TRUE(args.ok());
      hlo::Evaluator ev;
      auto want = ev.Evaluate(*mod, *args);
      ASSERT_TRUE(want.ok()) << want.status().message();
      ASSERT_TRUE(LapackCustomCalls().Run(*mod).ok());
      EXPECT_EQ(testing::CountOpcode(*mod, hlo::HloOpcode::kCustomCall), 0);
      auto got = ev.Evaluate(*mod, *args);
      ASSERT_TRUE(got.ok()) << got.status().message();
      for (int64_t i = 0; i < want->tuple_size(); ++i) {
        EXPECT_LE(testing::WorstError(got->element(i), want->element(i), 1e-5, 1e-5), 1.0) << i;
      }
    }
  }
  testing::CheckAgainstEvaluator(QrModule("2,", 4, 3, "parameter(0)"), "tpu-v4", 1e-5, 1e-4);
}

TEST(HouseholderQrTest, AMalformedCallIsALocatedError) {
  auto m = testing::Parse(R"(HloModule bad
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT g = (f32[4,3], f32[4]) custom-call(a), custom_call_target="Qr"
}
)");
  ASSERT_NE(m, nullptr);
  auto r = LapackCustomCalls().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("test.hlo:4:8: error: %g: custom-call Qr takes"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
