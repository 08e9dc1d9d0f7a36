// Known trip counts and the data-dependent whiles (hlo/while_loop.h): a fori loop's count is found,
// a loop whose limit is a parameter is data-dependent unless the user gave its count.
#include "hlo/while_loop.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// A loop in a called computation whose limit is the computation's parameter (JAX's nested jit: the
// wave equation's multi_step) has the count the calls give it: XLA's and tpusim's call inliners make
// the argument the limit. Two calls with the same constant agree; different ones leave it unknown,
// as does an entry parameter.
TEST(WhileLoopTest, ALimitPassedByEveryCallIsKnown) {
  auto module_with = [](const std::string& second_limit) {
    return ParseHloModule(R"(HloModule m
cond {
  s = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[4] add(x, x)
  ROOT t = (s32[], s32[], f32[4]) tuple(i1, n, y)
}
steps {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  z = s32[] constant(0)
  init = (s32[], s32[], f32[4]) tuple(z, n, x)
  loop = (s32[], s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(loop), index=2
}
ENTRY e {
  p = f32[4] parameter(0)
  seven = s32[] constant(7)
  three = s32[] add(seven, s32[] constant(-4))
  other = s32[] )" + second_limit + R"(
  a = f32[4] call(p, three), to_apply=steps
  ROOT b = f32[4] call(a, other), to_apply=steps
}
)");
  };
  for (const auto& [second, trips] :
       std::vector<std::pair<std::string, std::optional<int64_t>>>{
           {"constant(3)", 3}, {"constant(5)", std::nullopt}}) {
    StatusOr<std::unique_ptr<HloModule>> m = module_with(second);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const HloInstruction* loop = nullptr;
    for (const auto& c : (*m)->computations()) {
      if (c->FindInstruction("loop") != nullptr) loop = c->FindInstruction("loop");
    }
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(KnownTripCount(*loop).trips, trips) << second;
    EXPECT_EQ(DataDependentWhiles(**m, {}).empty(), trips.has_value()) << second;
  }
}

// One bound on a while's trips (kMaxWhileTrips): a count of exactly the bound is known; one trip
// more is refused with the reason the evaluator and the compiler both give.
TEST(WhileLoopTest, TheTripBoundIsOneRule) {
  auto loop_of = [](int64_t trips) {
    std::string text = kTwoLoops;
    text.replace(text.find("constant(10)"), 12, "constant(" + std::to_string(trips) + ")");
    return text;
  };
  for (int64_t trips : {kMaxWhileTrips, kMaxWhileTrips + 1}) {
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(loop_of(trips));
    ASSERT_TRUE(m.ok()) << m.status().message();
    const TripCount t = KnownTripCount(*(*m)->entry_computation()->FindInstruction("fori"));
    if (trips == kMaxWhileTrips) {
      EXPECT_EQ(t.trips, std::optional<int64_t>(kMaxWhileTrips));
      EXPECT_FALSE(t.over_limit);
    } else {
      EXPECT_FALSE(t.trips.has_value());
      EXPECT_TRUE(t.over_limit);
      EXPECT_EQ(t.reason, TooManyTripsReason(kMaxWhileTrips));
      EXPECT_EQ(t.reason,
                "more than 16777216 trips: tpusim runs at most 16777216 trips of one while "
                "(hlo::kMaxWhileTrips, one bound for the evaluator, the compiler and "
                "--trip-count)");
    }
  }
}

}  // namespace
}  // namespace tpusim::hlo
