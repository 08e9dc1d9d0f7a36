// The Householder QR expansion (compiler/passes/householder_qr_expansion.h, run by
// lapack-custom-calls; issue 16): `Qr` / `ProductOfElementaryHouseholderReflectors` of JAX's TPU
// lowering and lapack_?geqrf_ffi / lapack_?orgqr_ffi of its CPU lowering expanded into HLO,
// checked against the evaluator's values (tests/eval/householder_qr_test.cc tests those).
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
#include "tests/eval/linalg_modules.h"

namespace tpusim::compiler {
namespace {

using tpusim::testing::QrModule;

// The expansion computes the evaluator's formulas in f32 (sums in another order): square, tall,
// wide and batched, for the TPU and the CPU targets; and the device runs it.
TEST(HouseholderQrExpansionTest, ExpansionAgreesWithTheEvaluator) {
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

TEST(HouseholderQrExpansionTest, AMalformedCallIsALocatedError) {
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
