#include "hlo/eval/cpu_run.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "hlo/eval/npy.h"
#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

constexpr const char* kModule = R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  s = f32[2] add(a, b)
  ROOT t = (f32[2], f32[2]) tuple(s, a)
})";

TEST(CpuRunTest, NpyInputsAndOutputs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "cpu_run";
  fs::create_directories(dir / "in");
  ASSERT_TRUE(
      WriteNpy((dir / "in" / "param_0.npy").string(), Literal::FromVector<float>({2}, {1, 2}))
          .ok());
  ASSERT_TRUE(
      WriteNpy((dir / "in" / "param_1.npy").string(), Literal::FromVector<float>({2}, {10, 20}))
          .ok());
  auto module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok());
  CpuRunOptions o;
  o.inputs_dir = (dir / "in").string();
  o.outputs_dir = (dir / "out").string();
  o.repeat = 2;
  o.threads = 1;
  auto r = RunModuleOnCpu(**module, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->run_seconds.size(), 2u);
  ASSERT_EQ(r->outputs.size(), 2u);
  auto out0 = ReadNpyAs((dir / "out" / "output_0.npy").string(), Shape(PrimitiveType::kF32, {2}));
  ASSERT_TRUE(out0.ok()) << out0.status().message();
  EXPECT_EQ(out0->GetAsDouble(0), 11.0);  // 1 + 10
  EXPECT_EQ(out0->GetAsDouble(1), 22.0);  // 2 + 20
  EXPECT_EQ(r->outputs[0].checksum, out0->Checksum());
  std::string json = r->ToJson().Dump();
  for (const char* key : {"seconds_per_run", "runs", "threads", "outputs", "checksum", "dtype"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

TEST(CpuRunTest, MissingInputNamesFile) {
  auto module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok());
  CpuRunOptions o;
  o.inputs_dir = ::testing::TempDir() + "/no_such_inputs";
  auto r = RunModuleOnCpu(**module, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("param_0.npy"), std::string::npos);
}

TEST(CpuRunTest, RandomInputsAreDeterministic) {
  auto module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok());
  CpuRunOptions o;
  o.seed = 5;
  o.repeat = 1;
  auto a = RunModuleOnCpu(**module, o), b = RunModuleOnCpu(**module, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->outputs[0].checksum, b->outputs[0].checksum);
}

// A JAX pmap dump leaves replica_count at 1; its collectives name the devices (here 4 in a ring),
// and the CPU run evaluates that many replicas, as `tpusim run` does.
TEST(CpuRunTest, ReplicasComeFromTheCollectivesOfAPmapDump) {
  auto module = ParseHloModule(R"(
HloModule pmap
ENTRY e {
  a = f32[3] parameter(0)
  ROOT p = f32[3] collective-permute(a), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
})");
  ASSERT_TRUE(module.ok());
  CpuRunOptions o;
  o.repeat = 1;
  o.threads = 1;
  auto r = RunModuleOnCpu(**module, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->replicas, 4);
  EXPECT_EQ(r->outputs.size(), 4u);
}

}  // namespace
}  // namespace tpusim::hlo
