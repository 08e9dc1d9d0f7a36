// set-dimension-size with a constant size equal to the bound (static-dimension-size): removed, the
// `<=N` bounds downstream become N, and the values are the evaluator's bit for bit, whatever the
// dimension and the ops after it; a size below the bound stays a located error.
#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

class StaticDimensionSizeTest : public ::testing::TestWithParam<int> {};

TEST_P(StaticDimensionSizeTest, ASizeEqualToTheBoundIsRemoved) {
  const int d = GetParam();
  const std::string dims = d == 0 ? "<=16,128" : "16,<=128";
  const std::string n = d == 0 ? "16" : "128";
  const std::string dd = std::to_string(d);
  const std::string kept = d == 0 ? "128" : "16";  // the dimension the reduce keeps
  ExpectSameBits("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                 "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[16,128] parameter(0)\n"
                 "  n = s32[] constant(" + n + ")\n  s = f32[" + dims +
                 "] set-dimension-size(p, n), dimensions={" + dd + "}\n  e = f32[" + dims +
                 "] exponential(s)\n  z = f32[] constant(0)\n  r = f32[" +
                 kept + "] reduce(e, z), dimensions={" + dd + "}, to_apply=add\n  ROOT t = (f32[" +
                 dims + "], f32[" + kept + "]) tuple(e, r)\n}\n");
}

INSTANTIATE_TEST_SUITE_P(Dimensions, StaticDimensionSizeTest, ::testing::Values(0, 1));

TEST(StaticDimensionSizeErrorTest, ASizeBelowTheBoundIsALocatedError) {
  auto m = testing::Parse(R"(HloModule m
ENTRY e {
  p = f32[8,128] parameter(0)
  n = s32[] constant(100)
  ROOT r = f32[8,<=128] set-dimension-size(p, n), dimensions={1}
})");
  ASSERT_NE(m, nullptr);
  auto c = Compile(*m, testing::Config("tiny"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("test.hlo:5:"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("dynamic"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
