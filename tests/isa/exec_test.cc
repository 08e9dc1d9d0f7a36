#include "isa/exec.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "isa/assembler.h"
#include "isa/encoding.h"

namespace tpusim::isa {
namespace {

constexpr const char* kMatmul = R"(
.data hbm core=0, addr=0x0, bf16 1, -2, 3, 4        # W [2,2]
.data hbm core=0, addr=0x100, bf16 1, 1, 2, 0       # A [2,2]
  dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=2, n0=4
  dma.hbm_to_vmem flag=0, src=0x100, dst=0x100, elem_bytes=2, n0=4
  sync.wait flag=0, value=2
  mxu.load_weights mxu=0, addr=0x0, k=2, n=2, stride=2, dtype=bf16
  mxu.matmul mxu=0, lhs=0x100, stride=2, m=2, k=2, n=2, dtype=bf16, acc=0, latch=1
  mxu.pop mxu=0, acc=0, m=2, n=2, acc_dtype=f32, dst=0x200, stride=2, dtype=f32, act=relu
  dma.vmem_to_hbm flag=1, src=0x200, dst=0x1000, n0=4
  sync.wait flag=1
)";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tpusim_isa_exec_test_" + name)).string();
}

TEST(Exec, ParseDumpSpec) {
  auto d = ParseDumpSpec("hbm.1:0x40:8:bf16");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->space, MemSpace::kHbm);
  EXPECT_EQ(d->core, 1);
  EXPECT_EQ(d->address, 0x40u);
  EXPECT_EQ(d->count, 8u);
  EXPECT_EQ(d->dtype, DType::kBF16);
  EXPECT_FALSE(ParseDumpSpec("vmem:0x100:4").ok());
  EXPECT_FALSE(ParseDumpSpec("acc:0:4:f32").ok());
  EXPECT_FALSE(ParseDumpSpec("vmem:zz:4:f32").ok());
  EXPECT_FALSE(ParseDumpSpec("vmem:0:0:f32").ok());
}

TEST(Exec, RunsOnTheTinyConfigFromTextAndBinary) {
  auto chip = config::LoadChipConfig("configs/tiny.yaml");
  ASSERT_TRUE(chip.ok()) << chip.status().message();
  const std::string text_path = TempPath("mm.tasm"), bin_path = TempPath("mm.tbin");
  ASSERT_TRUE(WriteFileAtomic(text_path, kMatmul).ok());
  auto from_text = LoadProgramFile(text_path);
  ASSERT_TRUE(from_text.ok()) << from_text.status().message();
  ASSERT_TRUE(WriteFileAtomic(bin_path, EncodeProgram(*from_text)).ok());
  auto from_bin = LoadProgramFile(bin_path);
  ASSERT_TRUE(from_bin.ok()) << from_bin.status().message();
  EXPECT_EQ(*from_bin, *from_text);
  auto dump = ParseDumpSpec("hbm:0x1000:4:f32");
  ASSERT_TRUE(dump.ok());
  auto out = ExecProgram(*from_bin, *chip, {*dump});
  ASSERT_TRUE(out.ok()) << out.status().message();
  // A @ W = [[1+3, -2+4], [2, -4]] -> relu -> [4, 2, 2, 0].
  EXPECT_EQ(*out,
            "executed 8 instructions on 1 core(s) of tiny (interpreter, no timing)\n"
            "hbm.0[0x1000] f32 x 4: 4, 2, 2, 0\n");
  std::filesystem::remove(text_path);
  std::filesystem::remove(bin_path);
}

TEST(Exec, BinaryJunkIsReportedAsBadMagic) {
  const std::string path = TempPath("junk.tbin");
  ASSERT_TRUE(WriteFileAtomic(path, std::string("XPUS\x01\x00\x00\x00", 8)).ok());
  auto p = LoadProgramFile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("bad magic"), std::string::npos) << p.status().message();
  std::filesystem::remove(path);
  EXPECT_EQ(LoadProgramFile(TempPath("missing.tasm")).status().code(), StatusCode::kNotFound);
}

TEST(Exec, VerifierErrorsStopExecution) {
  auto chip = config::LoadChipConfig("configs/tiny.yaml");
  ASSERT_TRUE(chip.ok());
  auto p = Assemble("mxu.load_weights mxu=0, addr=0, k=16, n=8, stride=8, dtype=bf16\n", "x.tasm");
  ASSERT_TRUE(p.ok());
  auto out = ExecProgram(*p, *chip, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "core 0 instruction 0 (x.tasm:1) mxu.load_weights: field 'k': 16 is outside 1..8 (the "
            "array's rows)");
}

}  // namespace
}  // namespace tpusim::isa
