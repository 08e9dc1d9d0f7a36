// common/diagnostic.h: the `file:line:col: ` prefix every located message starts with, the
// `error:` form with the source line and a caret, and LocatedError's InvalidArgument.
#include "common/diagnostic.h"

#include <gtest/gtest.h>

#include <string>

namespace tpusim {
namespace {

TEST(DiagnosticTest, LocationPrefixHasNoSeverity) {
  EXPECT_EQ(LocationPrefix("m.hlo", {3, 7}), "m.hlo:3:7: ");
  EXPECT_EQ(LocationPrefix("", {3, 7}), "3:7: ");  // no file: the `file:` part is left out
}

TEST(DiagnosticTest, FormatDiagnosticShowsTheLineAndACaretUnderTheColumn) {
  const std::string source = "first\n  %x = bad(y)\nlast\n";
  EXPECT_EQ(FormatDiagnostic("m.hlo", source, {2, 8}, "unknown opcode 'bad'"),
            "m.hlo:2:8: error: unknown opcode 'bad'\n    %x = bad(y)\n         ^");
  // A line past the source, or no source: the message alone.
  EXPECT_EQ(FormatDiagnostic("m.hlo", source, {9, 1}, "gone"), "m.hlo:9:1: error: gone");
  EXPECT_EQ(FormatDiagnostic("m.hlo", "", {2, 8}, "gone"), "m.hlo:2:8: error: gone");
  // The prefix is LocationPrefix's.
  EXPECT_EQ(FormatDiagnostic("", "", {1, 2}, "m").rfind(LocationPrefix("", {1, 2}), 0), 0u);
}

TEST(DiagnosticTest, LongLinesAreCutAroundTheColumn) {
  const std::string line(1000, 'a');
  const std::string d = FormatDiagnostic("f", line, {1, 600}, "here");
  const size_t shown = d.find('\n');
  ASSERT_NE(shown, std::string::npos);
  const size_t caret_line = d.find('\n', shown + 1);
  ASSERT_NE(caret_line, std::string::npos);
  EXPECT_EQ(caret_line - shown - 3, 200u);  // "\n  " then 200 shown characters
  EXPECT_EQ(d.back(), '^');
}

TEST(DiagnosticTest, LocatedErrorIsInvalidArgument) {
  const Status st = LocatedError("c.yaml", "", {4, 1}, "duplicate key");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "c.yaml:4:1: error: duplicate key");
}

}  // namespace
}  // namespace tpusim
