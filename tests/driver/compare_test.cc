// RunCompare (driver/compare.h): the rows are consistent with the simulated cycles and the
// measured CPU time (seconds = cycles / clock_hz, speedup = CPU / TPU), the JSON carries them, and
// the per-op table joins both sides. No assertion depends on how fast the host is.
#include "driver/compare.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/config_loader.h"
#include "hlo/parser.h"
#include "sim/report/report.h"

namespace tpusim::driver {
namespace {

constexpr const char* kDense = R"(
HloModule dense
ENTRY e {
  x = f32[16,32] parameter(0)
  w = f32[32,8] parameter(1)
  d = f32[16,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  zb = f32[16,8] broadcast(z), dimensions={}
  ROOT r = f32[16,8] maximum(d, zb)
})";

constexpr const char* kDataParallel = R"(
HloModule dp, replica_count=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,32] parameter(0)
  w = f32[32,8] parameter(1)
  d = f32[16,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT g = f32[16,8] all-reduce(d), replica_groups={}, to_apply=sum
})";

std::unique_ptr<hlo::HloModule> Parse(const char* text) {
  auto m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

CompareOptions FastOptions() {
  CompareOptions o;
  o.repeat = 3;
  o.threads = 1;
  o.anchor = false;
  return o;
}

void ExpectRowConsistent(const TpuRow& row, double cpu_seconds) {
  ASSERT_GT(row.cycles, 0u);
  EXPECT_DOUBLE_EQ(row.seconds_per_step, static_cast<double>(row.sequential_runs) *
                                             static_cast<double>(row.cycles) / row.clock_hz);
  EXPECT_DOUBLE_EQ(row.speedup, cpu_seconds / row.seconds_per_step);
  EXPECT_GE(row.mxu_utilization, 0.0);
  EXPECT_LE(row.mxu_utilization, 1.0);
}

TEST(CompareTest, OneReplicaRowsAreTheSameRunAndConsistent) {
  auto module = Parse(kDense);
  ASSERT_NE(module, nullptr);
  auto config = config::LoadChipConfig("tiny");
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto r = RunCompare(*module, "dense.hlo", *config, FastOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();

  EXPECT_EQ(r->replicas, 1);
  EXPECT_EQ(r->cpu.run_seconds.size(), 3u);
  EXPECT_EQ(r->cpu.threads, 1);
  ASSERT_GT(r->cpu.median_seconds, 0.0);
  ASSERT_EQ(r->tpu.size(), 2u);
  // One replica: "all cores" is the 1-core run (tiny has one core anyway), and it says so.
  EXPECT_EQ(r->tpu[0].cores, 1);
  EXPECT_EQ(r->tpu[1].cores, 1);
  EXPECT_EQ(r->tpu[0].cycles, r->tpu[1].cycles);
  EXPECT_EQ(r->tpu[0].sequential_runs, 1);
  EXPECT_EQ(r->tpu[0].clock_hz, 1e9);  // configs/tiny.yaml
  EXPECT_FALSE(r->tpu[1].note.empty());
  for (const TpuRow& row : r->tpu) ExpectRowConsistent(row, r->cpu.median_seconds);
  EXPECT_TRUE(r->check.performed);
  EXPECT_TRUE(r->check.passed) << r->check.reason;

  // The dot is on both sides, runs on the MXU, and has 2*M*K*N FLOP on both.
  const OpRow* dot = nullptr;
  for (const OpRow& o : r->ops) {
    if (o.name == "d") dot = &o;
  }
  ASSERT_NE(dot, nullptr);
  EXPECT_TRUE(dot->on_cpu);
  EXPECT_TRUE(dot->on_tpu);
  EXPECT_EQ(dot->opcode, "dot");
  EXPECT_EQ(dot->tpu_flops, 2u * 16 * 32 * 8);
  EXPECT_DOUBLE_EQ(dot->hlo_flops, 2.0 * 16 * 32 * 8);
  EXPECT_DOUBLE_EQ(dot->tpu_seconds, static_cast<double>(dot->tpu_cycles) / 1e9);
  EXPECT_NE(dot->bound, sim::OpBound::kNone);
  EXPECT_GT(dot->bound_fraction, 0.0);
  EXPECT_LE(dot->bound_fraction, 1.0);
  // The per-op TPU seconds add up to the run (every cycle of the core is charged to one op or to
  // the untagged halt).
  double tpu_ops = 0;
  for (const OpRow& o : r->ops) tpu_ops += o.tpu_seconds;
  EXPECT_NEAR(tpu_ops, r->tpu[1].seconds_per_step, 1e-12);
}

TEST(CompareTest, JsonCarriesTheRows) {
  auto module = Parse(kDense);
  ASSERT_NE(module, nullptr);
  auto config = config::LoadChipConfig("tiny");
  ASSERT_TRUE(config.ok());
  CompareOptions o = FastOptions();
  o.anchor = true;
  o.anchor_budget_seconds = 0.05;
  auto r = RunCompare(*module, "dense.hlo", *config, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Json j = CompareJson(*r);
  const Json* cpu = j.Find("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->Find("seconds_per_step")->Dump(), Json(r->cpu.median_seconds).Dump());
  EXPECT_EQ(cpu->Find("threads")->Dump(), Json(1).Dump());
  const Json* tpu = j.Find("tpu");
  ASSERT_NE(tpu, nullptr);
  ASSERT_EQ(tpu->array().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Json& row = tpu->array()[i];
    EXPECT_EQ(row.Find("cores")->Dump(), Json(1).Dump());
    EXPECT_EQ(row.Find("seconds_per_step")->Dump(), Json(r->tpu[i].seconds_per_step).Dump());
    EXPECT_NE(row.Find("mxu_utilization"), nullptr);
  }
  const Json* speedup = j.Find("speedup");
  ASSERT_NE(speedup, nullptr);
  EXPECT_EQ(speedup->Find("one_core")->Dump(), Json(r->tpu[0].speedup).Dump());
  EXPECT_EQ(speedup->Find("all_cores")->Dump(), Json(r->tpu[1].speedup).Dump());
  const Json* anchor = j.Find("cpu_anchor");
  ASSERT_NE(anchor, nullptr);
  ASSERT_TRUE(r->anchor.has_value());
  EXPECT_GT(r->anchor->gemm_flops_per_s, 0.0);
  EXPECT_GT(r->anchor->memory_bandwidth_bytes_per_s(), 0.0);
  EXPECT_EQ(anchor->Find("threads")->Dump(), Json(1).Dump());
  EXPECT_NE(anchor->Find("gemm_flops_per_s"), nullptr);
  EXPECT_NE(anchor->Find("memory_bandwidth_bytes_per_s"), nullptr);
  // Text and CSV name the dot.
  EXPECT_NE(CompareText(*r, 5).find("speedup"), std::string::npos);
  EXPECT_NE(CompareOpsCsv(*r).find("\nd,dot,8192,"), std::string::npos) << CompareOpsCsv(*r);
}

TEST(CompareTest, ReplicatedStepCountsOneCoreRunsSequentially) {
  auto module = Parse(kDataParallel);
  ASSERT_NE(module, nullptr);
  auto config = config::LoadChipConfig("tiny-4");
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto r = RunCompare(*module, "dp.hlo", *config, FastOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->replicas, 2);  // replica_count=2
  EXPECT_TRUE(r->module_has_collectives);
  EXPECT_EQ(r->cpu.replicas, 2);
  ASSERT_EQ(r->tpu.size(), 2u);
  EXPECT_EQ(r->tpu[0].cores, 1);
  EXPECT_EQ(r->tpu[0].sequential_runs, 2);
  EXPECT_FALSE(r->tpu[0].note.empty());
  EXPECT_EQ(r->tpu[1].cores, 2);
  EXPECT_EQ(r->tpu[1].sequential_runs, 1);
  for (const TpuRow& row : r->tpu) ExpectRowConsistent(row, r->cpu.median_seconds);
  EXPECT_TRUE(r->check.passed) << r->check.reason;
  for (const OpRow& o : r->ops) {
    if (o.opcode == "all-reduce") {
      EXPECT_EQ(o.bound, sim::OpBound::kIci) << o.name;
    }
  }
}

// The report's per-op hbm_bytes (sim/report, used by scripts/plot_roofline.py) add up to the HBM
// traffic the HBM servers counted.
TEST(CompareTest, OpHbmBytesSumToHbmTraffic) {
  auto module = Parse(kDense);
  ASSERT_NE(module, nullptr);
  auto config = config::LoadChipConfig("tiny");
  ASSERT_TRUE(config.ok());
  auto run = RunModule(*module, *config, RunOptions{});
  ASSERT_TRUE(run.ok()) << run.status().message();
  uint64_t ops_hbm = 0;
  for (const sim::OpSummary& o : sim::SummarizeOps(run->sim, run->compiled.program)) {
    EXPECT_LE(o.hbm_bytes, o.bytes) << o.name;
    ops_hbm += o.hbm_bytes;
  }
  uint64_t hbm = 0;
  for (const std::string& path : run->sim.hbm_paths) {
    hbm += run->sim.stats->Get(path, "bytes_read").value_or(0);
    hbm += run->sim.stats->Get(path, "bytes_written").value_or(0);
  }
  EXPECT_GT(hbm, 0u);
  EXPECT_EQ(ops_hbm, hbm);
}

TEST(CompareTest, BadOptionsAreErrors) {
  auto module = Parse(kDense);
  ASSERT_NE(module, nullptr);
  auto config = config::LoadChipConfig("tiny");
  ASSERT_TRUE(config.ok());
  CompareOptions o = FastOptions();
  o.repeat = 0;
  auto r = RunCompare(*module, "dense.hlo", *config, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--repeat"), std::string::npos);
  // A single-chip config grows into a slice (config::SliceForCores); an explicit slice does not.
  auto slice = config::LoadChipConfig("tiny-4");
  ASSERT_TRUE(slice.ok());
  o = FastOptions();
  o.replicas = 2 * slice->total_cores();
  r = RunCompare(*module, "dense.hlo", *slice, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(fmt::format("{} devices", o.replicas)), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("tiny-4"), std::string::npos) << r.status().message();
}

// The devices are counted as `tpusim run` counts them (hlo::DevicesToRun): a JAX pmap dump names
// its replicas only in its collectives, and a partitioned module runs replicas x partitions.
TEST(CompareTest, DevicesAreCountedAsRunCountsThem) {
  constexpr const char* kPmap = R"(
HloModule pmap_step
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,8] parameter(0)
  ROOT g = f32[16,8] all-reduce(x), replica_groups={{0,1}}, to_apply=sum
})";
  auto config = config::LoadChipConfig("tiny-4");
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto pmap = Parse(kPmap);
  ASSERT_NE(pmap, nullptr);
  auto r = RunCompare(*pmap, "pmap.hlo", *config, FastOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();  // was: device 1 is not in [0, 1)
  EXPECT_EQ(r->replicas, 2);
  EXPECT_EQ(r->partitions, 1);
  EXPECT_EQ(r->cpu.replicas, 2);
  EXPECT_EQ(r->tpu[1].cores, 2);
  EXPECT_TRUE(r->check.passed) << r->check.reason;

  // Partitioned by XLA (its all-reduce joins the 2 partitions): 1 replica of 2 partitions, the CPU
  // evaluates both devices, and one core alone does not run the step.
  constexpr const char* kPartitioned = R"(
HloModule spmd, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,8] parameter(0)
  ROOT g = f32[16,8] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
})";
  auto spmd = Parse(kPartitioned);
  ASSERT_NE(spmd, nullptr);
  r = RunCompare(*spmd, "spmd.hlo", *config, FastOptions());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->replicas, 1);
  EXPECT_EQ(r->partitions, 2);
  EXPECT_EQ(r->cpu.replicas * r->cpu.partitions, 2);
  EXPECT_EQ(r->tpu[1].cores, 2);
  EXPECT_NE(r->tpu[0].note.find("not simulated"), std::string::npos) << r->tpu[0].note;
  EXPECT_TRUE(r->check.passed) << r->check.reason;
  const Json json = CompareJson(*r);
  const Json* partitions = json.Find("partitions");
  ASSERT_NE(partitions, nullptr);
  EXPECT_EQ(partitions->Dump(0), "2");
  EXPECT_NE(CompareText(*r, 5).find("(1 replica(s) x 2 partitions)"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::driver
