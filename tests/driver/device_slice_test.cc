// SliceForModule (driver/device_slice.h) and hlo::DevicesToRun: the devices a module runs on —
// --replicas, else replica_count x num_partitions (num_partitions also from a Shardy mesh), raised to
// the device ids its collectives name — and the slice of chips that holds them; compiler::Compile
// counts the same devices. Errors name the file and, where a device id set the count, its line:col.
#include "driver/device_slice.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/compile.h"
#include "config/config_loader.h"
#include "hlo/parser.h"
#include "hlo/verify_devices.h"
#include "isa/assembler.h"

namespace tpusim::driver {
namespace {

// An elementwise module with `header` after its name and `body` lines before the root.
std::string Module(const std::string& header, const std::string& body = "",
                   const std::string& sharding = "") {
  return "HloModule m" + header +
         "\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, "
         "b)\n}\n\nENTRY e {\n  x = f32[16,64]{1,0} parameter(0)" +
         sharding + "\n" + body + "  ROOT t = f32[16,64]{1,0} tanh(x)\n}\n";
}

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "m.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

config::ChipConfig Config(const char* name) {
  auto c = config::LoadChipConfig(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : config::ChipConfig{};
}

// {devices, partitions, replicas, total cores of the slice} of `text` on tpu-v4 (one chip of 2
// TensorCores) with --replicas `requested`.
struct Counts {
  int64_t devices, partitions, replicas, cores;
  bool operator==(const Counts&) const = default;
};
Counts CountsOf(const std::string& text, int64_t requested = 0) {
  auto m = Parse(text);
  if (m == nullptr) return {};
  auto s = SliceForModule(*m, Config("tpu-v4"), requested);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  return {s->devices, s->partitions, s->replicas(), s->config.total_cores()};
}

TEST(DeviceSliceTest, TheModuleHeaderSetsTheDevices) {
  EXPECT_EQ(CountsOf(Module("")), (Counts{1, 1, 1, 2}));
  EXPECT_EQ(CountsOf(Module(", replica_count=4")), (Counts{4, 1, 4, 4}));
  EXPECT_EQ(CountsOf(Module(", num_partitions=8")), (Counts{8, 8, 1, 8}));
  EXPECT_EQ(CountsOf(Module(", replica_count=2, num_partitions=4")), (Counts{8, 4, 2, 8}));
}

TEST(DeviceSliceTest, AShardyMeshSetsThePartitions) {
  const std::string mesh =
      ", frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>}}";
  EXPECT_EQ(CountsOf(Module(mesh, "", ", sharding={devices=[2,4]<=[8]}")), (Counts{8, 8, 1, 8}));
  // An unsharded module on a mesh runs on one device.
  EXPECT_EQ(CountsOf(Module(mesh)), (Counts{1, 1, 1, 2}));
}

TEST(DeviceSliceTest, CollectivesNameDevicesTheHeaderLeavesOut) {
  // A JAX pmap dump: replica_count=1, the devices only in the all-reduce's groups.
  const std::string pmap =
      Module("", "  ar = f32[16,64]{1,0} all-reduce(x), replica_groups={{0,1,2,3,4,5}}, "
                 "to_apply=sum\n");
  EXPECT_EQ(CountsOf(pmap), (Counts{6, 1, 6, 8}));
}

TEST(DeviceSliceTest, ReplicasGivenOverrideTheModule) {
  EXPECT_EQ(CountsOf(Module(", replica_count=2"), 8), (Counts{8, 1, 8, 8}));   // larger
  EXPECT_EQ(CountsOf(Module(", replica_count=4"), 1), (Counts{1, 1, 1, 2}));   // smaller
  EXPECT_EQ(CountsOf(Module(", num_partitions=2"), 6), (Counts{6, 2, 3, 8}));  // 3 x 2
  // A config that holds the devices is kept as it is, without a note.
  auto m = Parse(Module(", replica_count=4"));
  ASSERT_NE(m, nullptr);
  auto s = SliceForModule(*m, Config("tpu-v4-8"), 0);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->config.name, "tpu-v4-8");
  EXPECT_TRUE(s->note.empty());
  EXPECT_FALSE(SliceForModule(*Parse(Module(", replica_count=4")), Config("tpu-v4"), 0)
                   ->note.empty());
}

TEST(DeviceSliceTest, ReplicasThatSplitAReplicasPartitionsAreAnErrorNamingTheFile) {
  auto m = Parse(Module(", num_partitions=4"));
  ASSERT_NE(m, nullptr);
  for (int64_t requested : {2, 6, -1}) {
    auto s = SliceForModule(*m, Config("tpu-v4"), requested);
    ASSERT_FALSE(s.ok()) << requested;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("m.hlo: --replicas " + std::to_string(requested) + ":"),
              std::string::npos)
        << s.status().message();
    EXPECT_NE(s.status().message().find("4 partitions"), std::string::npos);
  }
}

TEST(DeviceSliceTest, ADeviceIdTooLargeForTheConfigIsLocatedAtItsInstruction) {
  // Device 99 sets the count (no replica_count): tpu-v4-8 is an explicit slice of 8 cores.
  const std::string text =
      Module("", "  ar = f32[16,64]{1,0} all-reduce(x), replica_groups={{0,99}}, to_apply=sum\n");
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  auto s = SliceForModule(*m, Config("tpu-v4-8"), 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("m.hlo:11:3: error: '%ar' (all-reduce) names device 99: "),
            std::string::npos)
      << s.status().message();
  // Given with --replicas, the count is the user's: the error names the config, not the module.
  auto given = SliceForModule(*m, Config("tpu-v4-8"), 100);
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.status().message().find("m.hlo:"), std::string::npos)
      << given.status().message();
  EXPECT_NE(given.status().message().find("tpu-v4-8"), std::string::npos);
}

TEST(DeviceSliceTest, TheCompilerCountsTheSameDevices) {
  for (const std::string& text :
       {Module(", replica_count=4"),
        Module("", "  ar = f32[16,64]{1,0} all-reduce(x), replica_groups={{0,1,2}}, "
                   "to_apply=sum\n")}) {
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    auto s = SliceForModule(*m, Config("tpu-v4"), 0);
    ASSERT_TRUE(s.ok()) << s.status().message();
    auto compiled = compiler::Compile(*m, s->config, {});
    ASSERT_TRUE(compiled.ok()) << compiled.status().message();
    EXPECT_EQ(compiled->devices, s->devices);
  }
  // ... and refuses the same --replicas.
  auto m = Parse(Module(", num_partitions=4"));
  ASSERT_NE(m, nullptr);
  compiler::CompileOptions options;
  options.num_replicas = 6;
  auto compiled = compiler::Compile(*m, Config("tpu-v4-8"), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().message(), hlo::DevicesToRun(*m, 6).status().message());
}

// `tpusim exec`: an assembled program's cores set the slice; too many for the config is an error
// at the first instruction of the highest core.
TEST(DeviceSliceTest, AProgramsCoresSetItsSliceAndTooManyAreLocated) {
  auto program = isa::Assemble(".core 0\n  ctrl.halt\n.core 3\n  ctrl.halt\n", "p.tasm");
  ASSERT_TRUE(program.ok()) << program.status().message();
  std::string note;
  auto grown = SliceForProgram(*program, Config("tpu-v4"), &note);
  ASSERT_TRUE(grown.ok()) << grown.status().message();
  EXPECT_EQ(grown->total_cores(), 4);
  EXPECT_FALSE(note.empty());
  note.clear();
  auto too_small = SliceForProgram(*program, Config("tpu-v1"), &note);
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find(
                "p.tasm:4:1: error: the program has 4 cores (code for core 3 starts here): "),
            std::string::npos)
      << too_small.status().message();
  // A program without source text: the slice's own error, unlocated.
  program->source_file.clear();
  auto unlocated = SliceForProgram(*program, Config("tpu-v1"), &note);
  ASSERT_FALSE(unlocated.ok());
  EXPECT_EQ(unlocated.status().message().find("p.tasm"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::driver
