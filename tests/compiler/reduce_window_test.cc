// lower-reduce-window: pooling and windowed sums become pad + strided slices folded by the
// reducer, checked on the ISA interpreter against the evaluator's reduce-window.
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "compiler/passes/reduce_window_lowering.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

constexpr char kReducers[] = R"(
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
)";

TEST(ReduceWindowTest, MaxPool3x3Stride2Padded) {
  // ResNet's stem max-pool (NHWC), padding with -inf.
  CheckAgainstEvaluator(std::string("HloModule mp\n") + kReducers + R"(
ENTRY e {
  x = f32[2,9,9,4] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT p = f32[2,5,5,4] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
}
)",
                        "tiny", 0, 0);
}

TEST(ReduceWindowTest, AveragePoolSumWithDilation) {
  CheckAgainstEvaluator(std::string("HloModule ap\n") + kReducers + R"(
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[1,2,2,3] reduce-window(x, zero), window={size=1x2x2x1 stride=1x3x3x1 rhs_dilate=1x2x2x1}, to_apply=add
}
)",
                        "tpu-v4", 0, 0);
}

TEST(ReduceWindowTest, CumulativeSumAsJaxWritesIt) {
  // jnp.cumsum: a window of the whole axis, padded on the left.
  CheckAgainstEvaluator(std::string("HloModule cs\n") + kReducers + R"(
ENTRY e {
  x = f32[4,16] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4,16] reduce-window(x, zero), window={size=1x16 pad=0_0x15_0}, to_apply=add
}
)",
                        "tiny", 1e-6, 1e-6);
}

TEST(ReduceWindowTest, UnsupportedReducerIsLeftInPlace) {
  auto m = testing::Parse(R"(
HloModule r
sub { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] subtract(b, a) }
ENTRY e {
  x = f32[8] parameter(0)
  zero = f32[] constant(0)
  ROOT c = f32[4] reduce-window(x, zero), window={size=2 stride=2}, to_apply=sub
}
)");
  ASSERT_NE(m, nullptr);
  auto changed = ReduceWindowLowering().Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  auto c = Compile(*m, testing::Config("tiny"), {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("reduce-window"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
