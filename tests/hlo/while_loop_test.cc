// Known trip counts and the data-dependent whiles (hlo/while_loop.h): a fori loop's count is found,
// a loop whose limit is a parameter is data-dependent unless the user gave its count.
#include "hlo/while_loop.h"

#include <gtest/gtest.h>

#include <memory>

#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

constexpr const char* kTwoLoops = R"(HloModule m
cond10 {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
cond_data {
  s = (s32[], f32[4]) parameter(0)
  x = f32[4] get-tuple-element(s), index=1
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0}, to_apply=add
  one = f32[] constant(100)
  ROOT lt = pred[] compare(r, one), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[4] add(x, x)
  ROOT t = (s32[], f32[4]) tuple(i1, y)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, p)
  fori = (s32[], f32[4]) while(init), condition=cond10, body=body
  ROOT grow = (s32[], f32[4]) while(fori), condition=cond_data, body=body
}
)";

TEST(WhileLoopTest, DataDependentWhilesAreThoseWithNoKnownOrGivenCount) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kTwoLoops);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* fori = (*m)->entry_computation()->FindInstruction("fori");
  const HloInstruction* grow = (*m)->entry_computation()->FindInstruction("grow");
  ASSERT_NE(fori, nullptr);
  ASSERT_NE(grow, nullptr);
  EXPECT_EQ(KnownTripCount(*fori).trips, std::optional<int64_t>(10));
  EXPECT_FALSE(KnownTripCount(*grow).trips.has_value());
  EXPECT_EQ(DataDependentWhiles(**m, {}), std::vector<std::string>{"grow"});
  EXPECT_TRUE(DataDependentWhiles(**m, {{"grow", 3}}).empty());
  EXPECT_EQ(DataDependentWhiles(**m, {{"fori", 3}}), std::vector<std::string>{"grow"});
}

}  // namespace
}  // namespace tpusim::hlo
