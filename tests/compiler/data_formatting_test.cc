// data-formatting (compiler/passes/data_formatting.h): in a dump taken after TPU layout assignment
// (tiled layouts on operand and result) every copy and reshape outside fused computations gets
// _tpusim_data_formatting="true"; MovesData is the one rule for which copies and reshapes are
// kernels. The lowering's side (each side's tiled bytes) is in layout_copy_test.cc.
#include "compiler/passes/data_formatting.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

constexpr char kTiled[] = R"(
HloModule after_layout_assignment
fused {
  q = f32[6,40]{1,0:T(8,128)} parameter(0)
  inner = f32[240]{0:T(256)} reshape(q)
  ROOT m = f32[240]{0:T(256)} negate(inner)
}
ENTRY e {
  x = f32[6,40]{1,0:T(8,128)} parameter(0)
  n = f32[6,40]{1,0:T(8,128)} negate(x)
  c = f32[6,40]{1,0:T(8,128)} copy(n)
  r = f32[240]{0:T(256)} reshape(c)
  f = f32[240]{0:T(256)} fusion(n), kind=kLoop, calls=fused
  ROOT t = (f32[240]{0:T(256)}, f32[240]{0:T(256)}) tuple(r, f)
})";

bool Marked(const hlo::HloInstruction& i) {
  for (const auto& [k, v] : i.frontend_attributes()) {
    if (k == "_tpusim_data_formatting") return v == "true";
  }
  return false;
}

const hlo::HloInstruction* Find(const hlo::HloModule& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

TEST(DataFormattingTest, TopLevelCopiesAndReshapesOfATiledDumpAreMarked) {
  DataFormatting pass;
  auto m = testing::ExpectRewriteKeepsBits(pass, kTiled);
  ASSERT_NE(m, nullptr);
  for (const char* name : {"c", "r"}) {
    const hlo::HloInstruction* i = Find(*m, name);
    ASSERT_NE(i, nullptr);
    EXPECT_TRUE(Marked(*i)) << name;
    EXPECT_TRUE(MovesData(*i)) << name;
  }
  // Inside the fusion the reshape is part of the fusion's kernel; other ops are not marked.
  for (const char* name : {"inner", "n", "m"}) {
    const hlo::HloInstruction* i = Find(*m, name);
    ASSERT_NE(i, nullptr);
    EXPECT_FALSE(Marked(*i)) << name;
    EXPECT_FALSE(MovesData(*i)) << name;
  }
}

// Before layout assignment (no tiles): nothing is marked; a copy moves data only between two
// different stated layouts, a reshape never.
TEST(DataFormattingTest, UntiledDumpsAreLeftAndOnlyLayoutChangingCopiesMoveData) {
  const std::string text = R"(
HloModule before_layout_assignment
ENTRY e {
  x = f32[6,40]{1,0} parameter(0)
  same = f32[6,40]{1,0} copy(x)
  swap = f32[6,40]{0,1} copy(x)
  r = f32[240]{0} reshape(x)
  ROOT t = (f32[6,40]{1,0}, f32[6,40]{0,1}, f32[240]{0}) tuple(same, swap, r)
})";
  DataFormatting pass;
  testing::ExpectUnchanged(pass, text);
  auto m = hlo::ParseHloModule(text, "test.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(MovesData(*Find(**m, "same")));
  EXPECT_TRUE(MovesData(*Find(**m, "swap")));
  EXPECT_FALSE(MovesData(*Find(**m, "r")));
  EXPECT_FALSE(MovesData(*Find(**m, "x")));
}

}  // namespace
}  // namespace tpusim::compiler
