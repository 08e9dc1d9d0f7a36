// hlo::CountWhileTrips: the trips of a while whose count only the values decide, counted on the
// evaluator with the run's arguments; what it leaves uncounted and when it fails.
#include "hlo/eval/while_trips.h"

#include <gtest/gtest.h>

#include "hlo/while_loop.h"
#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

// n = p * 0 + 5 is 5 for every argument, but not a constant expression: KnownTripCount cannot see
// through the parameter, so the while is data-dependent and runs 5 trips.
constexpr const char* kFiveTrips = R"(
HloModule count
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY e {
  p = s32[] parameter(0)
  zero = s32[] constant(0)
  five = s32[] constant(5)
  pz = s32[] multiply(p, zero)
  n = s32[] add(pz, five)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
)";

TEST(CountWhileTripsTest, CountsTheTripsTheValuesMake) {
  auto module = ParseHloModule(kFiveTrips);
  ASSERT_TRUE(module.ok()) << module.status().message();
  const std::vector<std::string> whiles = DataDependentWhiles(**module, {});
  ASSERT_EQ(whiles, std::vector<std::string>{"w"});
  for (int64_t devices : {1, 3}) {
    auto counted = CountWhileTrips(**module, devices, whiles, WhileTripOptions{});
    ASSERT_TRUE(counted.ok()) << counted.status().message();
    EXPECT_EQ(*counted, (std::map<std::string, int64_t>{{"w", 5}})) << devices;
  }
}

TEST(CountWhileTripsTest, CountsOnlyTheWhilesAskedFor) {
  auto module = ParseHloModule(kFiveTrips);
  ASSERT_TRUE(module.ok()) << module.status().message();
  for (const std::vector<std::string>& whiles :
       {std::vector<std::string>{}, std::vector<std::string>{"not_a_while"}}) {
    auto counted = CountWhileTrips(**module, 1, whiles, WhileTripOptions{});
    ASSERT_TRUE(counted.ok()) << counted.status().message();
    EXPECT_TRUE(counted->empty());
  }
}

TEST(CountWhileTripsTest, AWhilePastTheTripLimitIsAnErrorUnlessLenient) {
  auto module = ParseHloModule(kFiveTrips);
  ASSERT_TRUE(module.ok()) << module.status().message();
  WhileTripOptions options;
  options.max_trips = 3;
  auto strict = CountWhileTrips(**module, 1, {"w"}, options);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kResourceExhausted) << strict.status().message();
  options.lenient = true;
  auto lenient = CountWhileTrips(**module, 1, {"w"}, options);
  ASSERT_TRUE(lenient.ok()) << lenient.status().message();
  EXPECT_TRUE(lenient->empty());
}

TEST(CountWhileTripsTest, AModuleTooLargeToCheckIsNotEvaluated) {
  auto module = ParseHloModule(kFiveTrips);
  ASSERT_TRUE(module.ok()) << module.status().message();
  WhileTripOptions options;
  options.max_bytes = 1;  // below EstimateCheckBytes of any module
  options.max_trips = 3;  // an evaluation would fail: the empty result shows none ran
  auto counted = CountWhileTrips(**module, 1, {"w"}, options);
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  EXPECT_TRUE(counted->empty());
}

// A helper with a data-dependent loop called twice (as jax.random.beta calls gamma's rejection
// loop): the while runs 3 trips in one call and 6 in the other. Left out by default; with
// varying_as_most (a run that computes values, where the device evaluates the condition every
// trip) it gets the most trips, 6.
constexpr const char* kTwoCalls = R"(
HloModule twice
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
f {
  k = s32[] parameter(0)
  p = s32[] parameter(1)
  zero = s32[] constant(0)
  pz = s32[] multiply(p, zero)
  n = s32[] add(pz, k)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
ENTRY e {
  p = s32[] parameter(0)
  three = s32[] constant(3)
  six = s32[] constant(6)
  a = s32[] call(three, p), to_apply=f
  b = s32[] call(six, p), to_apply=f
  ROOT t = (s32[], s32[]) tuple(a, b)
}
)";

// A while in a conditional branch the inputs do not take never runs: named in never_ran, and
// counted by nobody (the driver runs it 0 trips).
TEST(CountWhileTripsTest, AWhileInAnUntakenBranchIsNamedAsNeverRun) {
  auto module = ParseHloModule(R"(
HloModule untaken
cond {
  s = f32[] parameter(0)
  lim = f32[] constant(100)
  ROOT c = pred[] compare(s, lim), direction=LT
}
body {
  s = f32[] parameter(0)
  two = f32[] constant(2)
  ROOT d = f32[] multiply(s, two)
}
doubling {
  x = f32[] parameter(0)
  ROOT w = f32[] while(x), condition=cond, body=body
}
negating {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f32[] parameter(0)
  never = pred[] compare(p, p), direction=NE
  ROOT c = f32[] conditional(never, p, p), true_computation=doubling, false_computation=negating
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const std::vector<std::string> whiles = DataDependentWhiles(**module, {});
  ASSERT_EQ(whiles, std::vector<std::string>{"w"});
  std::vector<std::string> never_ran;
  WhileTripOptions o;
  o.never_ran = &never_ran;
  auto counted = CountWhileTrips(**module, 1, whiles, o);
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  EXPECT_TRUE(counted->empty());
  EXPECT_EQ(never_ran, std::vector<std::string>{"w"});
}

TEST(CountWhileTripsTest, AWhileWhoseCountVariesGetsItsMostTripsWhenAsked) {
  auto module = ParseHloModule(kTwoCalls);
  ASSERT_TRUE(module.ok()) << module.status().message();
  const std::vector<std::string> whiles = DataDependentWhiles(**module, {});
  ASSERT_EQ(whiles, std::vector<std::string>{"w"});
  auto left_out = CountWhileTrips(**module, 1, whiles, WhileTripOptions{});
  ASSERT_TRUE(left_out.ok()) << left_out.status().message();
  EXPECT_TRUE(left_out->empty());
  WhileTripOptions most;
  most.varying_as_most = true;
  auto counted = CountWhileTrips(**module, 1, whiles, most);
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  EXPECT_EQ(*counted, (std::map<std::string, int64_t>{{"w", 6}}));
  std::map<std::string, int64_t> varying;  // named either way, with its most trips
  for (bool as_most : {false, true}) {
    WhileTripOptions o;
    o.varying_as_most = as_most;
    o.varying = &varying;
    varying.clear();
    ASSERT_TRUE(CountWhileTrips(**module, 1, whiles, o).ok());
    EXPECT_EQ(varying, (std::map<std::string, int64_t>{{"w", 6}})) << as_most;
  }
}

}  // namespace
}  // namespace tpusim::hlo
