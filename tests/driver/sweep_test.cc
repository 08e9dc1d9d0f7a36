// The sweep's jobs (driver/sweep.h): the grid's points, each point's files, the jobs file's shell
// line per point, and the check that every point's config loads before anything runs.
#include "driver/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tpusim::driver {
namespace {

TEST(SweepTest, GridPointsVaryTheFirstAxisSlowest) {
  auto mxu = ParseGridAxis("core.mxu.rows=128,256");
  auto shape = ParseGridAxis("system.shape=[2,2],[4,1]");
  ASSERT_TRUE(mxu.ok() && shape.ok());
  EXPECT_EQ(shape->values, (std::vector<std::string>{"[2,2]", "[4,1]"}));
  const auto points = GridPoints({*mxu, *shape});
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[1], (std::vector<std::string>{"core.mxu.rows=128", "system.shape=[4,1]"}));
  EXPECT_EQ(points[2], (std::vector<std::string>{"core.mxu.rows=256", "system.shape=[2,2]"}));
  EXPECT_FALSE(ParseGridAxis("core.mxu.rows=").ok());
}

TEST(SweepTest, EachPointRunsTpusimWithItsOverridesAndKeepsItsFiles) {
  EXPECT_EQ(SweepPointPath("/w", 0, "json"), "/w/point_0001.json");
  EXPECT_EQ(SweepPointPath("/w", 11, "rc"), "/w/point_0012.rc");
  SweepJob job;
  job.tpusim = "/bin/tpusim";
  job.model = "/m/model.hlo";
  job.config = "tiny";  // a name, not a file: kept as it is
  job.overrides = {"core.clock_hz=1e9"};
  job.run_args = {"--timing-only"};
  job.dir = "/w";
  const std::string text =
      SweepJobsText(job, {{"core.mxu.rows=128"}, {"core.mxu.rows=256 x"}});
  EXPECT_EQ(text,
            "/bin/tpusim -q --progress never run /m/model.hlo --config tiny --set "
            "core.clock_hz=1e9 --set core.mxu.rows=128 --report /w/point_0001.json --timing-only "
            ">/dev/null 2>/w/point_0001.err; echo $? >/w/point_0001.rc\n"
            "/bin/tpusim -q --progress never run /m/model.hlo --config tiny --set "
            "core.clock_hz=1e9 --set 'core.mxu.rows=256 x' --report /w/point_0002.json "
            "--timing-only >/dev/null 2>/w/point_0002.err; echo $? >/w/point_0002.rc\n");
}

TEST(SweepTest, APointWhoseConfigDoesNotLoadIsNamed) {
  EXPECT_TRUE(CheckSweepPoints("tiny", {}, {{"core.mxu.rows=64"}, {"core.mxu.rows=128"}}).ok());
  Status st = CheckSweepPoints("tiny", {}, {{"core.mxu.rows=64"}, {"core.mxu.rows=-3"}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--grid, point 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("core.mxu.rows"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tpusim::driver
