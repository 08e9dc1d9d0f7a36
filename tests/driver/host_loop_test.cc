// The host side of a training loop (driver/host_loop.h): which parameters are the batch,
// the three stages from the config keys, the pipeline, and the --scaling rows with host time.
#include "driver/host_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "config/config_loader.h"
#include "driver/run_module.h"
#include "driver/scaling.h"
#include "hlo/parser.h"

namespace tpusim::driver {
namespace {

// A training step's shape: weights w[32,8] and b[8] come back updated, the batch x[16,32] and
// labels y[16] (s32) are consumed, the loss f32[] goes back to the host.
constexpr char kStep[] = R"(HloModule step, replica_count=1
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[16,32]{1,0} parameter(0)
  w = f32[32,8]{1,0} parameter(1)
  b = f32[8]{0} parameter(2)
  y = s32[16]{0} parameter(3)
  d = f32[16,8]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  yf = f32[16]{0} convert(y)
  z = f32[] constant(0)
  l = f32[] reduce(d, z), dimensions={0,1}, to_apply=sum
  ly = f32[] reduce(yf, z), dimensions={0}, to_apply=sum
  loss = f32[] add(l, ly)
  w2 = f32[32,8]{1,0} negate(w)
  b2 = f32[8]{0} negate(b)
  ROOT t = (f32[], f32[32,8]{1,0}, f32[8]{0}) tuple(loss, w2, b2)
}
)";

RunModuleResult RunStep(const config::ChipConfig& chip, int64_t replicas) {
  auto m = hlo::ParseHloModule(kStep, "step.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  RunOptions o;
  o.replicas = replicas;
  o.timing_only = true;
  o.megacore = false;
  auto r = RunModule(**m, chip, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

config::ChipConfig Config(const std::vector<std::string>& overrides) {
  auto c = config::LoadChipConfig("tpu-v2-8", overrides);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

TEST(HostLoopTest, BatchIsTheParametersNoOutputMatches) {
  RunModuleResult r = RunStep(Config({}), 1);
  auto h = ComputeHostLoop(r, HostLoopOptions{10, true, {}});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->input_parameters, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(h->infeed_bytes_per_replica, 16 * 32 * 4 + 16 * 4);
  EXPECT_EQ(h->outfeed_bytes_per_replica, 4);  // the loss
  EXPECT_EQ(h->examples_per_replica, 16);
  // Explicit parameter numbers win.
  auto only_x = ComputeHostLoop(r, HostLoopOptions{1, true, {0}});
  ASSERT_TRUE(only_x.ok());
  EXPECT_EQ(only_x->infeed_bytes_per_replica, 16 * 32 * 4);
  EXPECT_FALSE(ComputeHostLoop(r, HostLoopOptions{1, true, {7}}).ok());
  EXPECT_FALSE(ComputeHostLoop(r, HostLoopOptions{0, true, {}}).ok());
}

// JAX's pmap lowers to a per-device body whose every argument is the device's [1, ...] slice: the
// examples are the batch dimension after the mapped one, not the 1 in front of it.
TEST(HostLoopTest, PmapBodyCountsTheBatchAfterTheMappedAxis) {
  constexpr char kPmapBody[] = R"(HloModule step, replica_count=2
ENTRY main {
  x = f32[1,16,32]{2,1,0} parameter(0)
  w = f32[1,32,8]{2,1,0} parameter(1)
  y = s32[1,16]{1,0} parameter(2)
  w2 = f32[1,32,8]{2,1,0} negate(w)
  yf = f32[1,16]{1,0} convert(y)
  z = f32[] constant(0)
  one = f32[1]{0} broadcast(z), dimensions={}
  ROOT t = (f32[1]{0}, f32[1,32,8]{2,1,0}, f32[1,16,32]{2,1,0}) tuple(one, w2, x)
}
)";
  auto m = hlo::ParseHloModule(kPmapBody, "pmap.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  RunOptions o;
  o.timing_only = true;
  o.megacore = false;
  auto r = RunModule(**m, Config({}), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto h = ComputeHostLoop(*r, HostLoopOptions{1, true, {2}});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->examples_per_replica, 16);
  // One leaf without the leading 1 (here the ordinary step): the leading dimension, as before.
  RunModuleResult plain = RunStep(Config({}), 1);
  auto hp = ComputeHostLoop(plain, HostLoopOptions{1, true, {3}});
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->examples_per_replica, 16);
}

TEST(HostLoopTest, StagesComeFromTheConfigKeysAndPipeline) {
  config::ChipConfig c =
      Config({"host.step_overhead_seconds=0.002", "host.input_seconds_per_example=0.0001",
              "host.transfer_latency_seconds=0.00001", "chip.host.bandwidth_bytes_per_s=1e9"});
  RunModuleResult r = RunStep(c, 1);
  auto h = ComputeHostLoop(r, HostLoopOptions{10, true, {}});
  ASSERT_TRUE(h.ok());
  EXPECT_DOUBLE_EQ(h->host_cpu_seconds, 0.002 + 16 * 0.0001);
  // Two infeed transfers and one outfeed, then the bytes over the link.
  EXPECT_DOUBLE_EQ(h->pcie_seconds, 3 * 0.00001 + (16 * 32 * 4 + 16 * 4 + 4) / 1e9);
  EXPECT_DOUBLE_EQ(h->device_seconds, r.sim.seconds());
  EXPECT_DOUBLE_EQ(h->wall_seconds,
                   std::max({h->host_cpu_seconds, h->pcie_seconds, h->device_seconds}));
  EXPECT_EQ(h->bound, "host CPU");
  EXPECT_DOUBLE_EQ(h->overlap_seconds, h->device_seconds + h->host_seconds - h->wall_seconds);
  EXPECT_DOUBLE_EQ(h->total_seconds,
                   h->host_cpu_seconds + h->pcie_seconds + h->device_seconds + 9 * h->wall_seconds);
  // Without --host-input nothing is fed.
  auto resident = ComputeHostLoop(r, HostLoopOptions{10, false, {}});
  ASSERT_TRUE(resident.ok());
  EXPECT_EQ(resident->infeed_bytes_per_replica, 0);
}

TEST(HostLoopTest, ReplicaProcessesShareTheHostsCores) {
  // 8 replicas on one host (4 chips) with 2 CPU cores: each core runs 4 processes' work.
  config::ChipConfig c = Config(
      {"host.step_overhead_seconds=0.001", "host.cpu_cores=2", "host.input_seconds_per_example=0"});
  auto h8 = ComputeHostLoop(RunStep(c, 8), HostLoopOptions{1, true, {}});
  ASSERT_TRUE(h8.ok());
  EXPECT_EQ(h8->hosts, 1);
  EXPECT_DOUBLE_EQ(h8->host_cpu_seconds, 0.001 * 4);
  auto h1 = ComputeHostLoop(RunStep(c, 1), HostLoopOptions{1, true, {}});
  ASSERT_TRUE(h1.ok());
  EXPECT_DOUBLE_EQ(h1->host_cpu_seconds, 0.001);
  // With enough cores the host stage does not grow.
  config::ChipConfig wide = Config({"host.step_overhead_seconds=0.001", "host.cpu_cores=96",
                                    "host.input_seconds_per_example=0"});
  auto w8 = ComputeHostLoop(RunStep(wide, 8), HostLoopOptions{1, true, {}});
  ASSERT_TRUE(w8.ok());
  EXPECT_DOUBLE_EQ(w8->host_cpu_seconds, 0.001);
}

TEST(HostLoopTest, ScalingRowsCarryTheHostBoundThroughput) {
  // Host-bound: the speedup in examples/s flattens at cpu_cores (2) once the processes share them.
  config::ChipConfig c = Config({"host.step_overhead_seconds=0.01", "host.cpu_cores=2"});
  RunOptions o;
  o.timing_only = true;
  HostLoopOptions host{5, true, {}};
  auto runs = RunScaling(kStep, "step.hlo", c, o, {1, 2, 4, 8}, &host);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->rows.size(), 4u);
  for (const ScalingRow& row : runs->rows) {
    EXPECT_TRUE(row.host_loop);
    EXPECT_EQ(row.bound, "host CPU");
  }
  EXPECT_DOUBLE_EQ(runs->rows[0].step_speedup, 1.0);
  EXPECT_NEAR(runs->rows[1].step_speedup, 2.0, 1e-9);
  EXPECT_NEAR(runs->rows[3].step_speedup, 2.0, 1e-9);  // 8 replicas on 2 host cores
  EXPECT_NE(ScalingText(runs->rows).find("examples/s"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::driver
