// The check's words beside the figures (issue 18 item 7): where the full-f32 comparison differs
// because of bf16 MXU passes, the note says so; elements that overflow on one side only are
// counted in words, not shown as an infinite "max abs error".
#include <gtest/gtest.h>

#include "driver/run_module.h"

namespace tpusim::driver {
namespace {

CheckResult Performed() {
  CheckResult c;
  c.performed = true;
  c.passed = true;
  c.dot_layers = 23;
  c.elements_compared = 1000;
  return c;
}

TEST(CheckNoteTest, NoNoteWhenF32AgreesWithinTolerance) { EXPECT_EQ(F32Note(Performed()), ""); }

TEST(CheckNoteTest, Bf16RoundingThroughTheDotLayers) {
  CheckResult c = Performed();
  c.elements_outside_tolerance_vs_f32 = 12;
  c.max_rel_error_vs_f32 = 0.5;
  const std::string note = F32Note(c);
  EXPECT_NE(note.find("bf16 rounding"), std::string::npos) << note;
  EXPECT_NE(note.find("23 dot/convolution layer(s)"), std::string::npos) << note;
  EXPECT_EQ(note.find("near 0"), std::string::npos) << note;
  EXPECT_EQ(note.find("overflow"), std::string::npos) << note;
}

TEST(CheckNoteTest, OverflowOnOneSideIsCountedInWords) {
  CheckResult c = Performed();
  c.elements_outside_tolerance_vs_f32 = 40;
  c.elements_non_finite_vs_f32 = 7;
  c.max_rel_error_vs_f32 = 131;
  const std::string note = F32Note(c);
  EXPECT_NE(note.find("7 element(s) overflow to inf"), std::string::npos) << note;
  EXPECT_NE(note.find("not included in the max"), std::string::npos) << note;
  EXPECT_NE(note.find("max rel error 131 comes from elements whose f32 value is near 0"),
            std::string::npos)
      << note;
}

}  // namespace
}  // namespace tpusim::driver
