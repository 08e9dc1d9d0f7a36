// sim/trace/trace_check.h: the trace-event rules every written trace must keep; the validator
// accepts nested and following slices and rejects each rule broken on its own. Moved from
// trace_test.cc (now trace_writer_test.cc).
#include "sim/trace/trace_check.h"

#include <gtest/gtest.h>

#include <string>

namespace tpusim::sim {
namespace {

constexpr char kNames[] =
    R"({"name":"process_name","ph":"M","pid":0,"args":{"name":"core0"}},)"
    R"({"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"vpu"}})";

std::string Wrap(const std::string& events) {
  return std::string(R"({"traceEvents":[)") + kNames + events + "]}";
}

TEST(TraceCheck, AcceptsNestedAndFollowingSlices) {
  EXPECT_TRUE(CheckChromeTrace(Wrap(R"(,{"name":"a","ph":"X","pid":0,"tid":1,"ts":0,"dur":10},)"
                                    R"({"name":"b","ph":"X","pid":0,"tid":1,"ts":2,"dur":3},)"
                                    R"({"name":"c","ph":"X","pid":0,"tid":1,"ts":10,"dur":1})"))
                  .ok());
}

TEST(TraceCheck, RejectsEachBrokenRule) {
  struct Case {
    const char* what;
    std::string trace;
    const char* expected;
  };
  const Case cases[] = {
      {"overlap without nesting",
       Wrap(R"(,{"name":"a","ph":"X","pid":0,"tid":1,"ts":0,"dur":10},)"
            R"({"name":"b","ph":"X","pid":0,"tid":1,"ts":5,"dur":10})"),
       "without nesting"},
      {"decreasing ts",
       Wrap(R"(,{"name":"a","ph":"X","pid":0,"tid":1,"ts":5,"dur":1},)"
            R"({"name":"b","ph":"X","pid":0,"tid":1,"ts":1,"dur":1})"),
       "timestamps must not decrease"},
      {"unnamed tid", Wrap(R"(,{"name":"a","ph":"X","pid":0,"tid":2,"ts":0,"dur":1})"),
       "no thread_name"},
      {"unnamed pid",
       Wrap(R"(,{"name":"c","ph":"C","pid":7,"ts":0,"args":{"GB/s":1}})"), "no process_name"},
      {"counter not a number",
       Wrap(R"(,{"name":"c","ph":"C","pid":0,"ts":0,"args":{"GB/s":"x"}})"), "finite number"},
      {"counter going back",
       Wrap(R"(,{"name":"c","ph":"C","pid":0,"ts":3,"args":{"v":1}},)"
            R"({"name":"c","ph":"C","pid":0,"ts":1,"args":{"v":2}})"),
       "counter ts decreases"},
      {"no pid", Wrap(R"(,{"name":"a","ph":"X","tid":1,"ts":0,"dur":1})"), "pid"},
      {"not a trace", R"({"events":[]})", "traceEvents"},
      {"not JSON", R"({"traceEvents":[)", "not JSON"},
  };
  for (const Case& c : cases) {
    auto r = CheckChromeTrace(c.trace);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos)
        << c.what << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace tpusim::sim
