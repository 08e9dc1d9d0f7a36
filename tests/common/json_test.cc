// common/json.h: insertion-ordered objects, shortest round-trip doubles, null for non-finite
// doubles, JSON string escapes, and the compact and pretty-printed forms.
#include "common/json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tpusim {
namespace {

TEST(JsonTest, ObjectsKeepInsertionOrderAndOneMemberPerKey) {
  Json j;
  j["zeta"] = 1;
  j["alpha"] = "a";
  j["zeta"] = 2;  // the existing member, not a second one
  EXPECT_TRUE(j.is_object());
  EXPECT_EQ(j.Dump(0), R"({"zeta":2,"alpha":"a"})");
  ASSERT_NE(j.Find("alpha"), nullptr);
  EXPECT_EQ(j.Find("missing"), nullptr);
}

TEST(JsonTest, NumbersPrintExactlyAndNonFiniteAsNull) {
  Json a = Json::MakeArray();
  a.push_back(int64_t{-9007199254740993});  // not a double: printed as the integer
  a.push_back(0.1);                          // shortest form that reads back to 0.1
  a.push_back(1e300);
  a.push_back(std::numeric_limits<double>::infinity());
  a.push_back(std::numeric_limits<double>::quiet_NaN());
  a.push_back(true);
  a.push_back(nullptr);
  EXPECT_EQ(a.Dump(0), "[-9007199254740993,0.1,1e+300,null,null,true,null]");
}

TEST(JsonTest, StringsAreEscaped) {
  EXPECT_EQ(JsonQuote("a\"b\\c\nd\te\rf"), R"("a\"b\\c\nd\te\rf")");
  EXPECT_EQ(JsonQuote(std::string("\x01", 1)), R"("\u0001")");
  EXPECT_EQ(JsonQuote("µs"), "\"µs\"");  // UTF-8 passes through
}

TEST(JsonTest, PrettyPrintIndentsEachLevelAndEmptyContainersStayOnOneLine) {
  Json j;
  j["list"] = Json::MakeArray();
  j["list"].push_back(1);
  j["empty"] = Json::MakeObject();
  EXPECT_EQ(j.Dump(2), "{\n  \"list\": [\n    1\n  ],\n  \"empty\": {}\n}\n");
}

}  // namespace
}  // namespace tpusim
