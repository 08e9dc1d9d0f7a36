// loop_region (compiler/passes/loop_region.h): the markers while-lowering leaves for a loop too
// long to unroll, read back from a module's text: which marker is which, the trip count, nested
// regions (innermost, enclosing, parent, end) and the malformed orders FindLoopRegions refuses.
#include "compiler/passes/loop_region.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/parser.h"

namespace tpusim::compiler {
namespace {

// An outer loop of 3 trips around an inner branch loop (break on a condition), then a value after.
constexpr char kNested[] = R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ob = f32[8] custom-call(x), custom_call_target="tpusim$loop_begin", backend_config="3"
  n = f32[8] negate(ob)
  ib = f32[8] custom-call(n), custom_call_target="tpusim$loop_begin", backend_config="4294967295"
  z = f32[] constant(0)
  s = f32[] reduce(ib, z), dimensions={0}, to_apply=add
  c = pred[] compare(s, z), direction=GT
  brk = () custom-call(c), custom_call_target="tpusim$loop_break", backend_config="5"
  a = f32[8] abs(ib)
  ie = f32[8] custom-call(ib, a), custom_call_target="tpusim$loop_end"
  oe = f32[8] custom-call(ob, ie), custom_call_target="tpusim$loop_end"
  ROOT after = f32[8] exponential(oe)
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
})";

std::unique_ptr<hlo::HloModule> ParseOk(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

const hlo::HloInstruction* Named(const hlo::HloModule& m, const std::string& name) {
  for (const auto& i : m.entry_computation()->instructions()) {
    if (i->name() == name) return i.get();
  }
  ADD_FAILURE() << "no " << name;
  return nullptr;
}

TEST(LoopRegionTest, MarkersAndTripCounts) {
  auto m = ParseOk(kNested);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(IsLoopBegin(*Named(*m, "ob")));
  EXPECT_TRUE(IsLoopEnd(*Named(*m, "oe")));
  EXPECT_TRUE(IsLoopBreak(*Named(*m, "brk")));
  EXPECT_TRUE(IsLoopMarker(*Named(*m, "brk")));
  EXPECT_FALSE(IsLoopMarker(*Named(*m, "n")));
  EXPECT_EQ(LoopTrips(*Named(*m, "ob")), 3);
  EXPECT_EQ(LoopTrips(*Named(*m, "ib")), kBranchLoopTrips);
  EXPECT_EQ(LoopTrips(*Named(*m, "oe")), -1);  // not a loop_begin
}

TEST(LoopRegionTest, NestedRegionsFromTheInstructionOrder) {
  auto m = ParseOk(kNested);
  ASSERT_NE(m, nullptr);
  auto r = FindLoopRegions(*m->entry_computation());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const hlo::HloInstruction *ob = Named(*m, "ob"), *ib = Named(*m, "ib");
  EXPECT_EQ(r->end_of.at(ob), Named(*m, "oe"));
  EXPECT_EQ(r->end_of.at(ib), Named(*m, "ie"));
  EXPECT_EQ(r->parent.count(ob), 0u);
  EXPECT_EQ(r->parent.at(ib), ob);
  // loop_begin belongs to the enclosing region, loop_end to its own.
  EXPECT_EQ(r->InnermostOf(ob), nullptr);
  EXPECT_EQ(r->InnermostOf(ib), ob);
  EXPECT_EQ(r->InnermostOf(Named(*m, "ie")), ib);
  EXPECT_EQ(r->InnermostOf(Named(*m, "n")), ob);
  EXPECT_EQ(r->InnermostOf(Named(*m, "after")), nullptr);
  EXPECT_EQ(r->Enclosing(Named(*m, "a")), (std::vector<const hlo::HloInstruction*>{ib, ob}));
  EXPECT_FALSE(r->empty());
}

TEST(LoopRegionTest, AnUnclosedOrCrossedRegionIsRefused) {
  auto open = ParseOk(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  b = f32[8] custom-call(x), custom_call_target="tpusim$loop_begin", backend_config="3"
  ROOT n = f32[8] negate(b)
})");
  ASSERT_NE(open, nullptr);
  auto r = FindLoopRegions(*open->entry_computation());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  auto crossed = ParseOk(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  b1 = f32[8] custom-call(x), custom_call_target="tpusim$loop_begin", backend_config="3"
  b2 = f32[8] custom-call(b1), custom_call_target="tpusim$loop_begin", backend_config="2"
  e1 = f32[8] custom-call(b1, b2), custom_call_target="tpusim$loop_end"
  ROOT e2 = f32[8] custom-call(b2, e1), custom_call_target="tpusim$loop_end"
})");
  ASSERT_NE(crossed, nullptr);
  auto c = FindLoopRegions(*crossed->entry_computation());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim::compiler
