// The names of XLA's eight 8-bit float types (xla/primitive_util.cc spells them) in the parser and
// printer: each parses as an array and a constant, prints back under the same name with the
// constant's values, and the printed module parses to the same text.
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

TEST(Float8TypesTest, EveryNameParsesAndPrintsBack) {
  for (const std::string t : {"f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4", "f8e4m3fnuz",
                              "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e8m0fnu"}) {
    const std::string text = "HloModule m\n\nENTRY e {\n  p = " + t +
                             "[2,3]{1,0} parameter(0)\n  c = " + t +
                             "[3]{0} constant({1, 0.5, 4})\n  f = f32[2,3]{1,0} convert(p)\n"
                             "  ROOT t = (f32[2,3]{1,0}, " +
                             t + "[3]{0}) tuple(f, c)\n}\n";
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "f8.hlo");
    ASSERT_TRUE(m.ok()) << t << ": " << m.status().message();
    const HloInstruction* p = (*m)->entry_computation()->FindInstruction("p");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(PrimitiveTypeName(p->shape().element_type()), t);
    EXPECT_EQ(p->shape().ByteSize(), 6) << t;  // one byte per element
    const std::string printed = PrintModule(**m);
    EXPECT_NE(printed.find("%p = " + t + "[2,3]{1,0} parameter(0)"), std::string::npos) << printed;
    EXPECT_NE(printed.find("%c = " + t + "[3]{0} constant({1, 0.5, 4})"), std::string::npos)
        << printed;
    StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed, "f8b.hlo");
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(PrintModule(**again), printed);
    EXPECT_TRUE(VerifyModule(**again, printed).ok()) << t;
  }
}

}  // namespace
}  // namespace tpusim::hlo
