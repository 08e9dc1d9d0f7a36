// mxu.load_weights / mxu.matmul / mxu.pop semantics (isa/execute_mxu.cc), hand-checked, plus
// random GEMMs against Eigen.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::ReadF32;
using testing::ReadS32;
using testing::ReadS8;
using testing::RunAsm;
using testing::RunAsmStatus;
using testing::SmallChip;

TEST(InterpreterMxu, MatmulOverwriteThenAccumulate) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 1, 2, 3, 4     # W [2,2] = [[1,2],[3,4]]
.data vmem core=0, addr=0x100, bf16 1, 1, 2, 0   # A [2,2] = [[1,1],[2,0]]
mxu.load_weights mxu=1, addr=0x0, k=2, n=2, stride=2, dtype=bf16
mxu.matmul mxu=1, lhs=0x100, stride=2, m=2, k=2, n=2, dtype=bf16, acc=4, latch=1
mxu.pop mxu=1, acc=4, m=2, n=2, acc_dtype=f32, dst=0x200, stride=2, dtype=f32
mxu.matmul mxu=1, lhs=0x100, stride=2, m=2, k=2, n=2, dtype=bf16, acc=4, accumulate=1
mxu.pop mxu=1, acc=4, m=2, n=2, acc_dtype=f32, dst=0x300, stride=2, dtype=f32
)");
  // A @ W = [[1*1+1*3, 1*2+1*4], [2*1+0*3, 2*2+0*4]] = [[4, 6], [2, 4]].
  EXPECT_EQ(ReadF32(in.vmem(0), 0x200, 4), (std::vector<float>{4, 6, 2, 4}));
  // accumulate=1 adds the same product again: 2 * (A @ W).
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 4), (std::vector<float>{8, 12, 4, 8}));
  // Only rows 4..5 and columns 0..1 of MXU 1's accumulators were touched; MXU 0 is untouched.
  EXPECT_EQ(in.mxu(0, 1).acc.word(4, 2), 0u);
  EXPECT_TRUE(in.mxu(0, 0).acc.empty());  // (core 0, MXU 0)
}

TEST(InterpreterMxu, TransposedWeightsAndStrides) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 1, 3, 9, 2, 4, 9   # W^T rows of stride 3: [[1,3,*],[2,4,*]]
.data vmem core=0, addr=0x100, bf16 1, 1, 7, 2, 0, 7 # A rows of stride 3: [[1,1,*],[2,0,*]]
mxu.load_weights mxu=0, addr=0x0, k=2, n=2, stride=3, dtype=bf16, transpose=1
mxu.matmul mxu=0, lhs=0x100, stride=3, m=2, k=2, n=2, dtype=bf16, acc=0, latch=1
mxu.pop mxu=0, acc=0, m=2, n=2, acc_dtype=f32, dst=0x200, stride=4, dtype=f32
)");
  // Same W = [[1,2],[3,4]] and A as above -> [[4,6],[2,4]]; pop rows 4 elements apart.
  auto out = ReadF32(in.vmem(0), 0x200, 8);
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(out[1], 6);
  EXPECT_EQ(out[4], 2);
  EXPECT_EQ(out[5], 4);
  EXPECT_EQ(out[2], 0);  // the gap between rows is untouched
}

TEST(InterpreterMxu, LatchSwapsShadowIntoActive) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 2        # W1 = [[2]]
.data vmem core=0, addr=0x10, bf16 3       # W2 = [[3]]
.data vmem core=0, addr=0x20, bf16 5       # A = [[5]]
mxu.load_weights mxu=0, addr=0x0, k=1, n=1, stride=1, dtype=bf16
mxu.matmul mxu=0, lhs=0x20, stride=1, m=1, k=1, n=1, dtype=bf16, acc=0, latch=1
mxu.load_weights mxu=0, addr=0x10, k=1, n=1, stride=1, dtype=bf16
mxu.matmul mxu=0, lhs=0x20, stride=1, m=1, k=1, n=1, dtype=bf16, acc=1
mxu.matmul mxu=0, lhs=0x20, stride=1, m=1, k=1, n=1, dtype=bf16, acc=2, latch=1
mxu.pop mxu=0, acc=0, m=3, n=1, acc_dtype=f32, dst=0x100, stride=1, dtype=f32
)");
  // 5*2 = 10 (W1 latched); W2 only in the shadow -> still 5*2 = 10; after the latch 5*3 = 15.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 3), (std::vector<float>{10, 10, 15}));
}

TEST(InterpreterMxu, PartialSumsRoundInKOrder) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 1, 1, 1                 # W column [1,1,1]
.data vmem core=0, addr=0x10, bf16 16777216, 1, 1, 1, 1, 16777216
mxu.load_weights mxu=0, addr=0x0, k=3, n=1, stride=1, dtype=bf16
mxu.matmul mxu=0, lhs=0x10, stride=3, m=2, k=3, n=1, dtype=bf16, acc=0, latch=1
mxu.pop mxu=0, acc=0, m=2, n=1, acc_dtype=f32, dst=0x100, stride=1, dtype=f32
)");
  // Row 0: 2^24, +1 -> 2^24 (tie to even), +1 -> 2^24. Row 1: 1, 2, 2 + 2^24 = 16777218 exactly.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 2), (std::vector<float>{16777216.0f, 16777218.0f}));
}

TEST(InterpreterMxu, F32PrecisionPasses) {
  // x = 1 + 2^-10 (LHS), w = 1 + 2^-9 (weight); K = N = M = 1.
  // hi(x) = 1, lo(x) = 2^-10; hi(w) = 1, lo(w) = 2^-9; lolo parts are 0.
  const float x = 1.0f + std::ldexp(1.0f, -10), w = 1.0f + std::ldexp(1.0f, -9);
  auto program = [&](const std::vector<std::pair<std::string, std::string>>& passes) {
    std::string s = fmt::format(
        ".data vmem core=0, addr=0x0, f32 {}\n.data vmem core=0, addr=0x10, "
        "f32 {}\n",
        w, x);
    bool first = true;
    for (auto [lhs_part, w_part] : passes) {
      s += fmt::format("mxu.load_weights mxu=0, addr=0x0, k=1, n=1, stride=1, dtype=f32, part={}\n",
                       w_part);
      s += fmt::format(
          "mxu.matmul mxu=0, lhs=0x10, stride=1, m=1, k=1, n=1, dtype=f32, part={}, "
          "acc=0, latch=1, accumulate={}\n",
          lhs_part, first ? 0 : 1);
      first = false;
    }
    s += "mxu.pop mxu=0, acc=0, m=1, n=1, acc_dtype=f32, dst=0x100, stride=1, dtype=f32\n";
    return s;
  };
  // DEFAULT: hi*hi = 1.
  Interpreter d(SmallChip());
  RunAsm(d, program({{"hi", "hi"}}));
  EXPECT_EQ(ReadF32(d.vmem(0), 0x100, 1)[0], 1.0f);
  // HIGH (bf16_3x, XLA's order lo*hi, hi*lo, then hi*hi): 2^-10, + 2^-9, + 1 = 1 + 3*2^-10.
  Interpreter h(SmallChip());
  RunAsm(h, program({{"lo", "hi"}, {"hi", "lo"}, {"hi", "hi"}}));
  EXPECT_EQ(ReadF32(h.vmem(0), 0x100, 1)[0], 1.0f + 3 * std::ldexp(1.0f, -10));
  // HIGHEST (bf16_6x: lo*lo, hi*lolo, lolo*hi, hi*lo, lo*hi, hi*hi) adds lo*lo = 2^-19: exactly
  // x*w.
  Interpreter hh(SmallChip());
  RunAsm(hh, program({{"lo", "lo"},
                      {"hi", "lolo"},
                      {"lolo", "hi"},
                      {"hi", "lo"},
                      {"lo", "hi"},
                      {"hi", "hi"}}));
  EXPECT_EQ(ReadF32(hh.vmem(0), 0x100, 1)[0], x * w);
  EXPECT_EQ(x * w, 1.0f + 3 * std::ldexp(1.0f, -10) + std::ldexp(1.0f, -19));
}

TEST(InterpreterMxu, Int8PathAndPopConversions) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, s8 127, -128, 1, 1    # W [2,2] = [[127,-128],[1,1]]
.data vmem core=0, addr=0x10, s8 127, 1            # A [1,2]
mxu.load_weights mxu=0, addr=0x0, k=2, n=2, stride=2, dtype=s8
mxu.matmul mxu=0, lhs=0x10, stride=2, m=1, k=2, n=2, dtype=s8, acc=0, latch=1
mxu.pop mxu=0, acc=0, m=1, n=2, acc_dtype=s32, dst=0x100, stride=2, dtype=s32
mxu.pop mxu=0, acc=0, m=1, n=2, acc_dtype=s32, dst=0x200, stride=2, dtype=s8
mxu.pop mxu=0, acc=0, m=1, n=2, acc_dtype=s32, dst=0x300, stride=2, dtype=s32, act=relu
)");
  // [127*127 + 1*1, 127*-128 + 1*1] = [16130, -16255].
  EXPECT_EQ(ReadS32(in.vmem(0), 0x100, 2), (std::vector<int32_t>{16130, -16255}));
  EXPECT_EQ(ReadS8(in.vmem(0), 0x200, 2), (std::vector<int8_t>{127, -128}));  // saturated
  EXPECT_EQ(ReadS32(in.vmem(0), 0x300, 2), (std::vector<int32_t>{16130, 0}));
}

TEST(InterpreterMxu, PopActivationAndBf16Output) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, bf16 1
.data vmem core=0, addr=0x10, bf16 -2, 0.5, 1.00390625
mxu.load_weights mxu=0, addr=0x0, k=1, n=1, stride=1, dtype=bf16
mxu.matmul mxu=0, lhs=0x10, stride=1, m=3, k=1, n=1, dtype=bf16, acc=0, latch=1
mxu.pop mxu=0, acc=0, m=3, n=1, acc_dtype=f32, dst=0x100, stride=1, dtype=f32, act=relu
mxu.pop mxu=0, acc=0, m=3, n=1, acc_dtype=f32, dst=0x200, stride=1, dtype=bf16, act=logistic
)");
  // 1.00390625 = 1 + 2^-8 is not bf16: the .data directive rounds it (tie -> even) to 1.0.
  EXPECT_EQ(ReadF32(in.vmem(0), 0x100, 3), (std::vector<float>{0, 0.5f, 1.0f}));
  auto sig = testing::ReadBf16(in.vmem(0), 0x200, 3);
  EXPECT_EQ(sig[1], RoundToBf16(1.0f / (1.0f + std::exp(-0.5f))));
}

TEST(InterpreterMxu, RuntimeErrorsNameInstructionAndLine) {
  Interpreter in(SmallChip());
  Status st = RunAsmStatus(in, R"(
mxu.load_weights mxu=0, addr=0x0, k=2, n=2, stride=2, dtype=bf16
mxu.matmul mxu=0, lhs=0x100, stride=4, m=1, k=4, n=2, dtype=bf16, acc=0, latch=1
)");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(
      st.message(),
      "core 0 instruction 1 (test.tasm:3) mxu.matmul: k=4, n=2 but the active weights are 2x2");
  Interpreter in2(SmallChip());
  st = RunAsmStatus(in2, "mxu.matmul mxu=0, lhs=0, stride=1, m=1, k=1, n=1, dtype=bf16, acc=0\n");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no active weights"), std::string::npos) << st.message();
}

// Random tiles against an Eigen GEMM: small integers in bf16 make every partial sum exact, so the
// summation order cannot matter and the comparison must be bit-exact.
TEST(InterpreterMxu, RandomTilesMatchEigen) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-8, 8);
  for (int trial = 0; trial < 10; ++trial) {
    const int M = 1 + trial % 7, K = 1 + (trial * 3) % 8, N = 1 + (trial * 5) % 8;
    Eigen::MatrixXf A(M, K), W(K, N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < K; ++j) A(i, j) = static_cast<float>(small(rng));
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < N; ++j) W(i, j) = static_cast<float>(small(rng));
    std::string a_vals, w_vals;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < K; ++j)
        a_vals += fmt::format("{}{}", a_vals.empty() ? "" : ", ", A(i, j));
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < N; ++j)
        w_vals += fmt::format("{}{}", w_vals.empty() ? "" : ", ", W(i, j));
    Interpreter in(SmallChip());
    RunAsm(in, fmt::format(R"(
.data vmem core=0, addr=0x0, bf16 {}
.data vmem core=0, addr=0x1000, bf16 {}
mxu.load_weights mxu=0, addr=0x0, k={}, n={}, stride={}, dtype=bf16
mxu.matmul mxu=0, lhs=0x1000, stride={}, m={}, k={}, n={}, dtype=bf16, acc=3, latch=1
mxu.pop mxu=0, acc=3, m={}, n={}, acc_dtype=f32, dst=0x2000, stride={}, dtype=f32
)",
                           w_vals, a_vals, K, N, N, K, M, K, N, M, N, N));
    Eigen::MatrixXf C = A * W;
    auto out = ReadF32(in.vmem(0), 0x2000, M * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        EXPECT_EQ(out[i * N + j], C(i, j)) << trial << " " << i << "," << j;
  }
}

TEST(InterpreterMxu, RandomInt8TilesMatchEigen) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> s8(-128, 127);
  const int M = 6, K = 8, N = 7;
  Eigen::MatrixXi A(M, K), W(K, N);
  std::string a_vals, w_vals;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < K; ++j) {
      A(i, j) = s8(rng);
      a_vals += fmt::format("{}{}", a_vals.empty() ? "" : ", ", A(i, j));
    }
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < N; ++j) {
      W(i, j) = s8(rng);
      w_vals += fmt::format("{}{}", w_vals.empty() ? "" : ", ", W(i, j));
    }
  Interpreter in(SmallChip());
  RunAsm(in, fmt::format(R"(
.data vmem core=0, addr=0x0, s8 {}
.data vmem core=0, addr=0x1000, s8 {}
mxu.load_weights mxu=0, addr=0x0, k=8, n=7, stride=7, dtype=s8
mxu.matmul mxu=0, lhs=0x1000, stride=8, m=6, k=8, n=7, dtype=s8, acc=0, latch=1
mxu.pop mxu=0, acc=0, m=6, n=7, acc_dtype=s32, dst=0x2000, stride=7, dtype=s32
)",
                         w_vals, a_vals));
  Eigen::MatrixXi C = A * W;
  auto out = ReadS32(in.vmem(0), 0x2000, M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) EXPECT_EQ(out[i * N + j], C(i, j));
}

}  // namespace
}  // namespace tpusim::isa
