// The collectives' semantics (isa/execute_collective.cc) on the interpreter: every ici.* kind,
// rank order and dtype width of reductions, sources read before destinations are written, the
// rendezvous (members that must agree, interleaved groupings that wait for each other, groups that
// never gather).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::ReadF32;
using testing::ReadS32;
using testing::RunAsm;
using testing::RunAsmStatus;
using testing::SmallChip;

TEST(InterpreterCollectives, AllReduceAllGatherReduceScatterAllToAll) {
  Interpreter in(SmallChip());
  std::string prog = ".replica_groups 0 {0,1,2,3}\n.replica_groups 1 {0,2},{1,3}\n";
  for (int c = 0; c < 4; ++c) {
    // Core c holds x_c = [c+1, 10(c+1), 100(c+1), 1000(c+1)] at VMEM 0.
    prog += fmt::format(".data vmem core={0}, addr=0x0, f32 {1}, {2}, {3}, {4}\n", c, c + 1,
                        10 * (c + 1), 100 * (c + 1), 1000 * (c + 1));
  }
  for (int c = 0; c < 4; ++c) {
    prog += fmt::format(".core {}\n", c);
    prog +=
        "  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x100, count=4, group=0\n";
    prog += "  ici.all_gather dtype=f32, space=vmem, src=0x0, dst=0x200, count=1, group=1\n";
    prog +=
        "  ici.reduce_scatter op=max, dtype=f32, space=vmem, src=0x0, dst=0x300, count=2, "
        "group=1\n";
    prog += "  ici.all_to_all dtype=f32, space=vmem, src=0x0, dst=0x400, count=2, group=1\n";
  }
  RunAsm(in, prog);
  // Sum over all 4 cores: (1+2+3+4) * [1, 10, 100, 1000].
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(ReadF32(in.vmem(c), 0x100, 4), (std::vector<float>{10, 100, 1000, 10000})) << c;
  }
  // Groups {0,2} and {1,3}: all_gather of the first element = [x_0[0], x_2[0]] = [1, 3] on cores
  // 0, 2.
  EXPECT_EQ(ReadF32(in.vmem(2), 0x200, 2), (std::vector<float>{1, 3}));
  EXPECT_EQ(ReadF32(in.vmem(1), 0x200, 2), (std::vector<float>{2, 4}));
  // reduce_scatter max in {0,2}: chunk 0 (rank 0 = core 0) = max(x_0[0:2], x_2[0:2]) = [3, 30];
  // chunk 1 (core 2) = max(x_0[2:4], x_2[2:4]) = [300, 3000].
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 2), (std::vector<float>{3, 30}));
  EXPECT_EQ(ReadF32(in.vmem(2), 0x300, 2), (std::vector<float>{300, 3000}));
  // all_to_all in {1,3}: core 1 gets chunk 0 of x_1 then chunk 0 of x_3 = [2, 20, 4, 40].
  EXPECT_EQ(ReadF32(in.vmem(1), 0x400, 4), (std::vector<float>{2, 20, 4, 40}));
  EXPECT_EQ(ReadF32(in.vmem(3), 0x400, 4), (std::vector<float>{200, 2000, 400, 4000}));
}

TEST(InterpreterCollectives, CollectivePermuteAndBf16AllReduce) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.permutation 0 {0,1},{1,2}
.replica_groups 0 {0,1,2}
.data hbm core=0, addr=0x0, s32 7
.data hbm core=1, addr=0x10, s32 8
.data hbm core=2, addr=0x0, s32 9
.data vmem core=0, addr=0x0, bf16 256
.data vmem core=1, addr=0x0, bf16 1
.data vmem core=2, addr=0x0, bf16 1
.core 0
  ici.collective_permute dtype=s32, space=hbm, src=0x0, dst=0x100, count=1, pairs=0
  ici.all_reduce op=sum, dtype=bf16, space=vmem, src=0x0, dst=0x0, count=1, group=0
.core 1
  ici.collective_permute dtype=s32, space=hbm, src=0x10, dst=0x110, count=1, pairs=0
  ici.all_reduce op=sum, dtype=bf16, space=vmem, src=0x0, dst=0x0, count=1, group=0
.core 2
  ici.collective_permute dtype=s32, space=hbm, src=0x0, dst=0x100, count=1, pairs=0
  ici.all_reduce op=sum, dtype=bf16, space=vmem, src=0x0, dst=0x0, count=1, group=0
)");
  // Cores 0 and 1 share chip 0's HBM; core 2 is on chip 1. 0 -> 1 sends 7 to 0x110, 1 -> 2 sends 8
  // to chip 1's 0x100; core 0 is no target and gets 0 at 0x100.
  EXPECT_EQ(ReadS32(in.hbm(1), 0x110, 1)[0], 7);
  EXPECT_EQ(ReadS32(in.hbm(2), 0x100, 1)[0], 8);
  EXPECT_EQ(ReadS32(in.hbm(0), 0x100, 1)[0], 0);
  // bf16 all-reduce in f32, rounded once: 256 + 1 + 1 = 258 (exact in f32) -> bf16(258) = 258
  // (bf16 spacing at 256 is 2). Pairwise bf16 rounding would give bf16(257) = 256, then 256 + 1 =
  // 256.
  EXPECT_EQ(testing::ReadBf16(in.vmem(1), 0x0, 1)[0], 258.0f);
}

TEST(InterpreterCollectives, EverySourceIsReadBeforeAnyDestinationIsWritten) {
  // Cores 0 and 1 share chip 0's HBM, and core 0's destination is core 1's source (and the
  // reverse): every rank's input is the value before the collective, as XLA's semantics and the
  // interpreter's read-all-then-write order give, whatever order the ranks are written in.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.replica_groups 0 {0,1}
.data hbm core=0, addr=0x0, s32 1, 2
.data hbm core=0, addr=0x8, s32 10, 20
.core 0
  ici.all_reduce op=sum, dtype=s32, space=hbm, src=0x0, dst=0x8, count=2, group=0
  ici.reduce_scatter op=sum, dtype=s32, space=hbm, src=0x0, dst=0x20, count=1, group=0
  ici.all_gather dtype=s32, space=hbm, src=0x0, dst=0x10, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=s32, space=hbm, src=0x8, dst=0x0, count=2, group=0
  ici.reduce_scatter op=sum, dtype=s32, space=hbm, src=0x8, dst=0x24, count=1, group=0
  ici.all_gather dtype=s32, space=hbm, src=0x8, dst=0x18, count=1, group=0
)");
  // all-reduce: both ranks get [1 + 10, 2 + 20] (rank 0 wrote 0x8 before rank 1 wrote 0x0, but
  // rank 1's input was read first).
  EXPECT_EQ(ReadS32(in.hbm(0), 0x0, 4), (std::vector<int32_t>{11, 22, 11, 22}));
  // reduce_scatter of [11, 22] + [11, 22]: rank 0 gets chunk 0 (22), rank 1 chunk 1 (44).
  EXPECT_EQ(ReadS32(in.hbm(0), 0x20, 2), (std::vector<int32_t>{22, 44}));
  // all_gather of the first elements (11 and 11) into both destinations.
  EXPECT_EQ(ReadS32(in.hbm(0), 0x10, 4), (std::vector<int32_t>{11, 11, 11, 11}));
}

TEST(InterpreterCollectives, ReductionsKeepRankOrderAndTheDtypesWidth) {
  // f32 sums in rank order: (1e8 + 1) + -1e8 = 0 in f32 (1e8 + 1 rounds to 1e8), where
  // (1e8 + -1e8) + 1 = 1; s8 sums wrap at 8 bits: 100 + 100 + 100 = 300 - 256 = 44; s8 max is
  // signed.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.replica_groups 0 {0,1,2}
.replica_groups 1 {0,2,1}
.data vmem core=0, addr=0x0, f32 1e8
.data vmem core=1, addr=0x0, f32 1
.data vmem core=2, addr=0x0, f32 -1e8
.data vmem core=0, addr=0x40, s8 100, -1
.data vmem core=1, addr=0x40, s8 100, -128
.data vmem core=2, addr=0x40, s8 100, 5
.core 0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=s8, space=vmem, src=0x40, dst=0x50, count=1, group=0
  ici.all_reduce op=max, dtype=s8, space=vmem, src=0x41, dst=0x51, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=s8, space=vmem, src=0x40, dst=0x50, count=1, group=0
  ici.all_reduce op=max, dtype=s8, space=vmem, src=0x41, dst=0x51, count=1, group=0
.core 2
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=s8, space=vmem, src=0x40, dst=0x50, count=1, group=0
  ici.all_reduce op=max, dtype=s8, space=vmem, src=0x41, dst=0x51, count=1, group=0
)");
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(ReadF32(in.vmem(c), 0x10, 1)[0], 0.0f) << c;  // ranks 0, 1, 2 = cores 0, 1, 2
    EXPECT_EQ(ReadF32(in.vmem(c), 0x20, 1)[0], 1.0f) << c;  // ranks 0, 1, 2 = cores 0, 2, 1
    std::vector<int8_t> s8(2);
    ASSERT_TRUE(in.vmem(c).Read(0x50, s8.data(), 2).ok());
    EXPECT_EQ(s8, (std::vector<int8_t>{44, 5})) << c;
  }
}

TEST(InterpreterCollectives, MismatchAcrossTheGroupIsAnError) {
  Interpreter in(SmallChip());
  Status st = RunAsmStatus(in, R"(
.replica_groups 0 {0,1}
.core 0
  ici.all_reduce op=sum, dtype=f32, src=0x0, dst=0x0, count=4, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, src=0x0, dst=0x0, count=8, group=0
)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("collective mismatch across the group: core 0 has count=4 but core 1 "
                              "has count=8"),
            std::string::npos)
      << st.message();
}

// Two groupings that interleave (JAX xmap / 2-D meshes: {0,1},{2,3} then {0,2},{1,3}): core 1
// reaches its second {0,1} all-reduce while core 0 still waits in {0,2}; that is not a mismatch,
// the rendezvous waits for core 0 (this was "collective mismatch ... space" on a real module).
constexpr char kInterleavedGroups[] = R"(
.replica_groups 0 {0,1}, {2,3}
.replica_groups 1 {0,2}, {1,3}
.data vmem core=0, addr=0x0, f32 1
.data vmem core=1, addr=0x0, f32 2
.data vmem core=2, addr=0x0, f32 3
.data vmem core=3, addr=0x0, f32 4
.core 0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
.core 2
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
.core 3
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
)";

TEST(InterpreterCollectives, InterleavedGroupsWaitForEachOther) {
  Interpreter in(SmallChip());
  RunAsm(in, kInterleavedGroups);
  // {1+2, 3+4} = {3, 7}; {3+7} = 10 everywhere; {10+10} = 20.
  for (int c = 0; c < 4; ++c) EXPECT_EQ(ReadF32(in.vmem(c), 0x30, 1)[0], 20.0f) << c;
}

// Core 0 waits for core 1 in {0,1}; core 1 waits for core 2 in {1,2}; core 2 halts: no
// rendezvous can gather, and the error lists where every core waits.
TEST(InterpreterCollectives, GroupsThatNeverGatherAreADeadlock) {
  Interpreter in(SmallChip());
  Status st = RunAsmStatus(in, R"(
.replica_groups 0 {0,1}, {2}
.replica_groups 1 {1,2}, {0}
.core 0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1, group=1
.core 2
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1, group=0
)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("deadlock"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("core 1 waits"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tpusim::isa
