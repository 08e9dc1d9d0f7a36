// The MXU models and isa::Interpreter's reference numerics (isa/numerics.h: MxuDotF32, MxuDotS32)
// compute the same bits: the shared numerics contract of mxu_model.h, checked across the two
// layers.
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "isa/numerics.h"
#include "sim/core/mxu_model.h"
#include "tests/mxu/mxu_test_util.h"

namespace tpusim::sim {
namespace {

class MxuIsaContractTest : public ::testing::TestWithParam<MxuModelKind> {};

TEST_P(MxuIsaContractTest, Bf16ColumnsMatchMxuDotF32) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    const int64_t r = 1 + static_cast<int64_t>(rng() % 24),
                  c = 1 + static_cast<int64_t>(rng() % 24);
    const int64_t k = 1 + static_cast<int64_t>(rng() % r), n = 1 + static_cast<int64_t>(rng() % c);
    const int64_t m = 1 + static_cast<int64_t>(rng() % 9);
    MxuArrayConfig cfg;
    cfg.rows = r;
    cfg.cols = c;
    cfg.accumulator_rows = m;
    auto mxu = CreateMxuModel(GetParam(), cfg);
    ASSERT_TRUE(mxu.ok());
    const bool specials = round % 3 == 0;
    const std::vector<float> w = testing::RandomBf16s(rng, k * n, specials);
    const std::vector<float> a = testing::RandomBf16s(rng, m * k, specials);
    const std::vector<float> b = testing::RandomBf16s(rng, m * k, specials);
    ASSERT_TRUE((*mxu)->Issue(MxuOp::LoadWeights(k, n, w), Cycles(0)).ok());
    ASSERT_TRUE((*mxu)->Issue(MxuOp::MatMul(m, k, a, true, false, 0), Cycles(0)).ok());
    ASSERT_TRUE((*mxu)->Issue(MxuOp::MatMul(m, k, b, false, true, 0), Cycles(0)).ok());
    const MxuAccumulators& acc = (*mxu)->accumulators();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        // acc = fl(dot(a) + dot(b)): overwrite, then accumulate (mxu_model.h "Numerics").
        const float expected =
            isa::MxuDotF32(&a[i * k], &w[j], k, n) + isa::MxuDotF32(&b[i * k], &w[j], k, n);
        EXPECT_TRUE(testing::SameResult(acc.word(i, j), std::bit_cast<uint32_t>(expected), true))
            << "round " << round << " acc[" << i << "][" << j << "] = " << acc.f32(i, j) << ", isa "
            << expected;
      }
    }
  }
}

TEST_P(MxuIsaContractTest, Int8ColumnsMatchMxuDotS32) {
  std::mt19937_64 rng(12);
  const int64_t r = 32, c = 8, k = 32, n = 8, m = 4;
  MxuArrayConfig cfg;
  cfg.rows = r;
  cfg.cols = c;
  auto mxu = CreateMxuModel(GetParam(), cfg);
  ASSERT_TRUE(mxu.ok());
  const std::vector<int8_t> w = testing::RandomInt8s(rng, k * n),
                            a = testing::RandomInt8s(rng, m * k);
  ASSERT_TRUE((*mxu)->Issue(MxuOp::LoadWeightsInt8(k, n, w), Cycles(0)).ok());
  ASSERT_TRUE((*mxu)->Issue(MxuOp::MatMulInt8(m, k, a, true, false, 0), Cycles(0)).ok());
  const std::vector<int32_t> w32(w.begin(), w.end()), a32(a.begin(), a.end());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ((*mxu)->accumulators().s32(i, j), isa::MxuDotS32(&a32[i * k], &w32[j], k, n));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, MxuIsaContractTest,
                         ::testing::Values(MxuModelKind::kPe, MxuModelKind::kFast),
                         [](const auto& info) {
                           return info.param == MxuModelKind::kPe ? std::string("Pe")
                                                                  : std::string("Fast");
                         });

}  // namespace
}  // namespace tpusim::sim
