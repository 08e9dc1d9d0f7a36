#include "isa/verifier.h"

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::SmallChip;

Status VerifyAsm(const std::string& text, MemorySizes sizes = SmallChip()) {
  auto p = Assemble(text, "v.tasm");
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return p.status();
  return Verify(*p, sizes);
}

void ExpectError(const std::string& text, const std::string& expected) {
  Status st = VerifyAsm(text);
  ASSERT_FALSE(st.ok()) << text;
  EXPECT_EQ(st.message(), expected);
}

TEST(Verifier, AcceptsAWellFormedProgram) {
  Status st = VerifyAsm(R"(
.replica_groups 0 {0,1}
.core 0
  dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=2, n0=64
  sync.wait flag=0
  mxu.load_weights mxu=1, addr=0x0, k=8, n=8, stride=8, dtype=bf16
  mxu.matmul mxu=1, lhs=0x0, stride=8, m=4, k=8, n=8, dtype=bf16, acc=60, latch=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x100, dst=0x100, count=8, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x200, dst=0x200, count=8, group=0
)");
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(Verifier, MxuShapesAndAccumulatorRows) {
  ExpectError("mxu.load_weights mxu=2, addr=0, k=9, n=8, stride=8, dtype=bf16\n",
              "core 0 instruction 0 (v.tasm:1) mxu.load_weights: field 'mxu': 2 but the core has 2 "
              "MXU(s)\n"
              "core 0 instruction 0 (v.tasm:1) mxu.load_weights: field 'k': 9 is outside 1..8 (the "
              "array's rows)");
  ExpectError("mxu.matmul mxu=0, lhs=0, stride=8, m=8, k=8, n=8, dtype=bf16, acc=60\n",
              "core 0 instruction 0 (v.tasm:1) mxu.matmul: field 'acc': rows [60, 68) are outside "
              "the 64 accumulator rows per MXU (core.mxu.accumulator_rows)");
  ExpectError("mxu.matmul mxu=0, lhs=0, stride=8, m=1, k=8, n=8, dtype=bf16, part=lo, acc=0\n",
              "core 0 instruction 0 (v.tasm:1) mxu.matmul: field 'part': lo is only meaningful for "
              "f32 operands; use hi");
  ExpectError("mxu.pop mxu=0, acc=0, m=1, n=8, acc_dtype=s32, dst=0, stride=8, dtype=bf16\n",
              "core 0 instruction 0 (v.tasm:1) mxu.pop: field 'dtype': cannot pop s32 accumulators "
              "as bf16");
}

// A DMA moves at most what the larger of its two memories holds: zero strides may repeat a box
// (a broadcast), but not 2^40 bytes of it, and n0 x n1 x n2 x elem_bytes never wraps.
TEST(Verifier, DmaBytesBoundedByTheLargerMemory) {
  auto error = [](const std::string& text) {
    Status st = VerifyAsm(text + "sync.wait flag=0\n");
    return st.ok() ? std::string("ok") : st.message();
  };
  // A row broadcast into all of VMEM (1 MiB), and 64 MiB (all of HBM) of repeats: accepted.
  EXPECT_EQ(error("dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=4, n0=256, n1=1024, "
                  "dst_s1=1024\n"),
            "ok");
  EXPECT_EQ(error("dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=4, n0=256, n1=65536\n"), "ok");
  // One run more: refused, naming the instruction, both memories and their sizes.
  EXPECT_EQ(error("dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=4, n0=256, n1=65537\n"),
            "core 0 instruction 0 (v.tasm:1) dma.hbm_to_vmem: field 'n1': the copy moves "
            "67109888 bytes (n0 x n1 x n2 x elem_bytes), more than hbm (67108864 bytes) and vmem "
            "(1048576 bytes) hold; zero or overlapping strides repeat the same bytes");
  // Past 2^64 bytes (8 x 2^16 x (2^24 - 1)^2): said so, not wrapped to a small count.
  EXPECT_NE(error("dma.vmem_to_hbm flag=0, src=0, dst=0, elem_bytes=8, n0=65536, n1=16777215, "
                  "n2=16777215\n")
                .find("field 'n1': the copy moves 2^64 or more bytes"),
            std::string::npos);
  // dma.gather: `count` slices of one box, all written to the same VMEM slice.
  EXPECT_NE(error("dma.gather flag=0, src=0, dst=0, elem_bytes=4, n0=1024, idx=0, count=262144, "
                  "idx_scale=0, bound=0, slice_stride=0\n")
                .find("field 'count': the copy moves 1073741824 bytes (n0 x n1 x n2 x elem_bytes "
                      "x count)"),
            std::string::npos);
}

TEST(Verifier, AddressesAndAlignment) {
  // 1 MiB VMEM: 0x100000 is one past the end.
  ExpectError(
      "vpu.fill dtype=f32, dst=0xffffc, count=2, value=0\n",
      "core 0 instruction 0 (v.tasm:1) vpu.fill: field 'dst': bytes [0xffffc, 0x100004) are "
      "outside vmem (1048576 bytes)");
  ExpectError("vpu.unary op=exp, dtype=f32, dst=0x2, src=0x0, count=1\n",
              "core 0 instruction 0 (v.tasm:1) vpu.unary: field 'dst': address 0x2 is not aligned "
              "to 4 bytes");
  // Strided DMA: the last row starts at 3 * 0x100000 in HBM (64 MiB is fine) but VMEM overflows.
  ExpectError("dma.hbm_to_vmem flag=0, src=0, dst=0, n0=1, n1=4, src_s1=0x100000, dst_s1=0x80000\n",
              "core 0 instruction 0 (v.tasm:1) dma.hbm_to_vmem: field 'dst': bytes [0x0, 0x180004) "
              "are outside vmem (1048576 bytes)");
  ExpectError("vpu.copy dtype=s32, dst=0, src=0x8, n0=4, src_s0=-1\n",
              "core 0 instruction 0 (v.tasm:1) vpu.copy: field 'src': the strides reach below "
              "address 0");
  ExpectError("vpu.unary op=exp, dtype=s32, dst=0, src=0, count=0\n",
              "core 0 instruction 0 (v.tasm:1) vpu.unary: field 'op': exp is not defined for s32\n"
              "core 0 instruction 0 (v.tasm:1) vpu.unary: field 'count': must be >= 1");
}

TEST(Verifier, FlagsMustBeSignalled) {
  ExpectError("sync.wait flag=3\n",
              "core 0 instruction 0 (v.tasm:1) sync.wait: field 'flag': flag 3 is waited on but "
              "nothing signals it (no sync.signal or DMA with that flag on core 0, no remote DMA "
              "with dst_flag=3 to it)");
  // A remote DMA from core 1 signals core 0's flag 3.
  EXPECT_TRUE(VerifyAsm(".core 0\n sync.wait flag=3\n.core 1\n dma.vmem_to_remote flag=0, src=0, "
                        "dst=0, n0=1, dst_core=0, dst_flag=3\n")
                  .ok());
}

TEST(Verifier, CollectivesMustAgreeAcrossTheGroup) {
  ExpectError(R"(.replica_groups 0 {0,1}
.core 0
  ici.all_gather dtype=f32, space=vmem, src=0, dst=0x100, count=4, group=0
.core 1
  ici.all_gather dtype=bf16, space=vmem, src=0, dst=0x100, count=4, group=0
)",
              "core 1 instruction 0 (v.tasm:5) ici.all_gather: does not match core 0 instruction 0 "
              "of the same group: field 'dtype' differs (1 vs 0)");
  ExpectError(
      R"(.replica_groups 0 {0,1}
.core 0
  sync.barrier group=0
.core 1
  nop
)",
      "replica group entry 0: core 0 runs 1 collective(s)/barrier(s) on it but core 1 runs 0");
  // The assembler already refuses a table naming a core the program lacks, at its line:column;
  // the verifier still checks programs decoded from a binary.
  StatusOr<Program> text = Assemble(".replica_groups 0 {0,7}\n", "v.tasm");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(
      text.status().message().find("v.tasm:1:22: error: core 7 is not a core of this program"),
      std::string::npos)
      << text.status().message();
  Program decoded;
  decoded.cores.resize(1);
  decoded.replica_groups.push_back({{{0, 7}}});
  Status st = Verify(decoded, SmallChip());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "replica group entry 0: core 7 is not a core of the program (1 cores)");
}

TEST(Verifier, ProgramLargerThanTheSystem) {
  MemorySizes one = SmallChip();
  one.cores = 1;
  Status st = VerifyAsm(".core 1\nnop\n", one);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "the program has 2 cores but the system has 1");
}

}  // namespace
}  // namespace tpusim::isa
