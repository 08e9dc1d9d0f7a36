// hlo::CloneModule: a deep copy whose instructions and computations keep their source locations in
// the original text (not the printed copy's lines), so a pass's error about the copy points into
// the user's file; the copy is independent of the original.
#include <gtest/gtest.h>

#include "hlo/clone.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace tpusim::hlo {
namespace {

TEST(CloneModuleTest, KeepsEveryLocationOfTheOriginalText) {
  // Comments and blank lines make the printed copy's lines differ from the file's.
  auto m = ParseHloModule(R"(HloModule m

// a comment the printer drops

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}


ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})", "user.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto c = CloneModule(**m);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)->source_name(), "user.hlo");
  EXPECT_EQ(PrintModule(**c), PrintModule(**m));
  const HloInstruction* r = (*c)->entry_computation()->FindInstruction("r");
  ASSERT_NE(r, nullptr);
  const HloInstruction* orig = (*m)->entry_computation()->FindInstruction("r");
  EXPECT_EQ(r->location().line, 15);  // the file's line, not the printed copy's
  EXPECT_EQ(r->location().line, orig->location().line);
  EXPECT_EQ(r->location().column, orig->location().column);
  EXPECT_EQ((*c)->FindComputation("add")->FindInstruction("s")->location().line, 8);
  EXPECT_NE(r, orig);  // a copy, not a view
}

}  // namespace
}  // namespace tpusim::hlo
