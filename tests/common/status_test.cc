// common/status.h: the code -> exit code map the `tpusim` command uses, the codes' names, the
// message prefixing, StatusOr, and the two propagation macros.
#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tpusim {
namespace {

TEST(StatusTest, EveryCodeMapsToItsExitCode) {
  EXPECT_EQ(ExitCodeFor(StatusCode::kOk), 0);
  EXPECT_EQ(ExitCodeFor(StatusCode::kCheckFailed), 1);
  EXPECT_EQ(ExitCodeFor(StatusCode::kInvalidArgument), 2);
  EXPECT_EQ(ExitCodeFor(StatusCode::kNotFound), 2);
  EXPECT_EQ(ExitCodeFor(StatusCode::kUnimplemented), 2);
  EXPECT_EQ(ExitCodeFor(StatusCode::kResourceExhausted), 2);
  EXPECT_EQ(ExitCodeFor(StatusCode::kInternal), 3);
  // A value outside the enum is treated as a bug in tpusim, not as bad input.
  EXPECT_EQ(ExitCodeFor(static_cast<StatusCode>(99)), 3);
}

TEST(StatusTest, CodeNames) {
  EXPECT_STREQ(StatusCodeName(StatusCode::kOk), "ok");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInvalidArgument), "invalid argument");
  EXPECT_STREQ(StatusCodeName(StatusCode::kNotFound), "not found");
  EXPECT_STREQ(StatusCodeName(StatusCode::kUnimplemented), "unimplemented");
  EXPECT_STREQ(StatusCodeName(StatusCode::kResourceExhausted), "resource exhausted");
  EXPECT_STREQ(StatusCodeName(StatusCode::kCheckFailed), "check failed");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInternal), "internal error");
  EXPECT_STREQ(StatusCodeName(static_cast<StatusCode>(99)), "unknown");
}

TEST(StatusTest, ConstructorsSetTheirCodeAndKeepTheMessage) {
  EXPECT_TRUE(OkStatus().ok());
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(OkStatus().ToString(), "ok");
  const struct {
    Status st;
    StatusCode code;
  } cases[] = {
      {InvalidArgument("m"), StatusCode::kInvalidArgument},
      {NotFound("m"), StatusCode::kNotFound},
      {Unimplemented("m"), StatusCode::kUnimplemented},
      {ResourceExhausted("m"), StatusCode::kResourceExhausted},
      {CheckFailed("m"), StatusCode::kCheckFailed},
      {Internal("m"), StatusCode::kInternal},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(c.st.ok());
    EXPECT_EQ(c.st.code(), c.code);
    EXPECT_EQ(c.st.message(), "m");
    EXPECT_EQ(c.st.ToString(), "m");  // the message alone: it already names its location
  }
}

TEST(StatusTest, WithPrefixPutsThePrefixAndAColonBeforeTheMessage) {
  const Status st = NotFound("no such key").WithPrefix("chip.yaml").WithPrefix("--config");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(), "--config: chip.yaml: no such key");
  // An ok status stays ok and empty: there is nothing to locate.
  const Status ok = OkStatus().WithPrefix("chip.yaml");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(StatusOrTest, HoldsAValueOrAnError) {
  StatusOr<std::string> v(std::string("abc"));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(*v, "abc");
  EXPECT_EQ(v->size(), 3u);
  v.value() += "d";
  EXPECT_EQ(v.value(), "abcd");

  StatusOr<std::string> e(InvalidArgument("bad"));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(e.status().message(), "bad");
}

TEST(StatusOrTest, MovesAMoveOnlyValueOut) {
  StatusOr<std::unique_ptr<int>> p(std::make_unique<int>(7));
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> taken = std::move(p).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 7);
}

Status FailIf(bool fail, int* reached) {
  TPUSIM_RETURN_IF_ERROR(fail ? ResourceExhausted("too big") : OkStatus());
  ++*reached;
  return OkStatus();
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument(std::to_string(x) + " is odd");
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  TPUSIM_ASSIGN_OR_RETURN(const int h, Half(x));
  TPUSIM_ASSIGN_OR_RETURN(const int q, Half(h));  // two in one scope: distinct temporaries
  return q;
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstError) {
  int reached = 0;
  EXPECT_TRUE(FailIf(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  const Status st = FailIf(true, &reached);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.message(), "too big");
  EXPECT_EQ(reached, 1);  // the line after the macro did not run
}

TEST(StatusMacrosTest, AssignOrReturnAssignsTheValueOrPassesTheErrorOn) {
  ASSERT_TRUE(Quarter(12).ok());
  EXPECT_EQ(*Quarter(12), 3);
  EXPECT_EQ(Quarter(6).status().message(), "3 is odd");  // the second step's error
  EXPECT_EQ(Quarter(5).status().message(), "5 is odd");  // the first step's error
  EXPECT_EQ(Quarter(5).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpusim
