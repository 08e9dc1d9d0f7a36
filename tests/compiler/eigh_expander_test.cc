// eigh-expander (compiler/passes/eigh_expander.h, issue 16): JAX's `Eigh` custom-call (TPU
// lowering), lapack_?syevd_ffi and lapack_?gesdd_ffi (CPU lowering) expanded into XLA's parallel
// Jacobi sweeps — a data-dependent while the device runs as real control flow — checked against
// the evaluator's values (tests/eval/eigh_test.cc tests those).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/passes/eigh_expander.h"
#include "compiler/passes/lapack_custom_calls.h"
#include "hlo/eval/evaluator.h"
#include "hlo/eval/while_trips.h"
#include "hlo/while_loop.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"
#include "tests/eval/linalg_modules.h"

namespace tpusim::compiler {
namespace {

using tpusim::testing::EighModule;
using tpusim::testing::SvdModule;

// The expansion's HLO, on the evaluator, gives the call's values to f32 rounding (eigenvector
// signs included); the expanded module has no custom-call, and a while named after the call.
TEST(EighExpanderTest, ExpansionAgreesWithTheEvaluator) {
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
TEST(EighExpanderTest, DeviceRunsTheSweeps) {
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

// The expansion's HLO on the evaluator and on the device gives the call's values (signs too).
TEST(EighExpanderTest, SvdExpansionAgreesWithTheEvaluator) {
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

TEST(EighExpanderTest, AMalformedCallIsALocatedError) {
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
