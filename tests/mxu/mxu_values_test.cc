// MXU numerics on hand-made cases: the k-order of the column sums, no fused multiply-add, int8
// wrap-around, NaN/inf propagation, signed zeros, overwrite vs accumulate; and the errors Issue
// returns. Every case runs on both models.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "sim/core/mxu_model.h"
#include "tests/mxu/mxu_test_util.h"

namespace tpusim::sim {
namespace {

MxuArrayConfig Array(int64_t rows, int64_t cols, int64_t weight_buffers = 2) {
  MxuArrayConfig c;
  c.rows = rows;
  c.cols = cols;
  c.weight_buffers = weight_buffers;
  c.accumulator_rows = 8;
  return c;
}

class MxuValuesTest : public ::testing::TestWithParam<MxuModelKind> {
 protected:
  std::unique_ptr<MxuModel> Make(const MxuArrayConfig& c) {
    auto m = CreateMxuModel(GetParam(), c);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return std::move(m).value();
  }
  static void Ok(MxuModel& mxu, const MxuOp& op) {
    auto t = mxu.Issue(op, Cycles(0));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
  }
  static uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }
};

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST_P(MxuValuesTest, ColumnSumsRunInKOrder) {
  // w = 1; a = [2^24, 1, 1]. In k order: fl(2^24 + 1) = 2^24 (tie to even), + 1 -> 2^24 again.
  // Any other order (1 + 1 first) would give 2^24 + 2, which f32 represents exactly.
  auto mxu = Make(Array(3, 1));
  Ok(*mxu, MxuOp::LoadWeights(3, 1, {1.0f, 1.0f, 1.0f}));
  Ok(*mxu, MxuOp::MatMul(1, 3, {16777216.0f, 1.0f, 1.0f}, true, false, 0));
  EXPECT_EQ(mxu->accumulators().f32(0, 0), 16777216.0f);
}

TEST_P(MxuValuesTest, NoFusedMultiplyAdd) {
  // s = a0*w0 = -2^-149 (exact); p = a1*w1 = 1.5 * 2^-150, which rounds to 2^-149 in f32. Separate
  // rounding: fl(-2^-149 + 2^-149) = +0. A fused a1*w1 + s would round -0.25 * 2^-149 to -0.
  auto mxu = Make(Array(2, 1));
  const float a0 = -std::ldexp(1.0f, -133), w0 = std::ldexp(1.0f, -16);
  const float a1 = std::ldexp(1.5f, -75), w1 = std::ldexp(1.0f, -75);
  Ok(*mxu, MxuOp::LoadWeights(2, 1, {w0, w1}));
  Ok(*mxu, MxuOp::MatMul(1, 2, {a0, a1}, true, false, 0));
  EXPECT_EQ(mxu->accumulators().word(0, 0), 0x00000000u);
}

TEST_P(MxuValuesTest, NegativeZeroProductGivesPositiveZero) {
  // s starts at +0.0f, and +0 + -0 = +0 under round-to-nearest.
  auto mxu = Make(Array(2, 2));
  Ok(*mxu, MxuOp::LoadWeights(1, 2, {-1.0f, 1.0f}));
  Ok(*mxu, MxuOp::MatMul(1, 1, {0.0f}, true, false, 0));
  EXPECT_EQ(mxu->accumulators().word(0, 0), 0x00000000u);  // 0 * -1 = -0, + (+0) = +0
  EXPECT_EQ(mxu->accumulators().word(0, 1), 0x00000000u);
}

TEST_P(MxuValuesTest, NanAndInfPropagate) {
  // Column 0: a NaN input -> NaN. Column 1: inf * 0 -> NaN. Column 2: inf + (-inf) -> NaN.
  // Column 3: 2^127 * 2 overflows to +inf. Column 4: finite, 1*1 + 2*1 = 3.
  auto mxu = Make(Array(2, 5));
  const float big = std::ldexp(1.0f, 127);
  Ok(*mxu, MxuOp::LoadWeights(2, 5,
                              {1.0f, 0.0f, 1.0f, 2.0f, 1.0f,      //
                               1.0f, 0.0f, -1.0f, 0.0f, 1.0f}));  //
  Ok(*mxu, MxuOp::MatMul(1, 2, {kNaN, 2.0f}, true, false, 0));
  Ok(*mxu, MxuOp::MatMul(1, 2, {kInf, kInf}, false, false, 1));
  Ok(*mxu, MxuOp::MatMul(1, 2, {big, 1.0f}, false, false, 2));
  const MxuAccumulators& acc = mxu->accumulators();
  for (int n = 0; n < 5; ++n) EXPECT_TRUE(std::isnan(acc.f32(0, n))) << n;  // NaN in every column
  EXPECT_TRUE(std::isnan(acc.f32(1, 1)));                                   // inf * 0
  EXPECT_TRUE(std::isnan(acc.f32(1, 2)));                                   // inf * 1 + inf * -1
  EXPECT_EQ(acc.f32(1, 0), kInf);                                           // inf * 1 + inf * 1
  EXPECT_EQ(acc.f32(2, 3), kInf);                                           // 2^127 * 2 overflows
  EXPECT_EQ(acc.f32(2, 4), big + 1.0f);  // = 2^127 (the 1 is lost)
}

TEST_P(MxuValuesTest, OverwriteThenAccumulate) {
  auto mxu = Make(Array(2, 2));
  Ok(*mxu, MxuOp::LoadWeights(2, 2, {1.0f, 2.0f, 3.0f, 4.0f}));  // W = [[1, 2], [3, 4]]
  Ok(*mxu, MxuOp::MatMul(2, 2, {1.0f, 1.0f, 2.0f, 0.5f}, true, false, 3));
  Ok(*mxu, MxuOp::MatMul(1, 2, {1.0f, 0.0f}, false, true, 4));  // acc[4] += [1, 2]
  const MxuAccumulators& acc = mxu->accumulators();
  EXPECT_EQ(acc.f32(3, 0), 4.0f);         // 1*1 + 1*3
  EXPECT_EQ(acc.f32(3, 1), 6.0f);         // 1*2 + 1*4
  EXPECT_EQ(acc.f32(4, 0), 3.5f + 1.0f);  // (2*1 + 0.5*3) + 1
  EXPECT_EQ(acc.f32(4, 1), 6.0f + 2.0f);  // (2*2 + 0.5*4) + 2
  EXPECT_EQ(acc.word(0, 0), 0u);          // untouched rows stay zero
}

TEST_P(MxuValuesTest, Int8ProductsAndWrapAround) {
  // One column of R = 32 products (-128) * (-128) = 2^14 sums to 2^19; accumulating it 4096 times
  // reaches 2^31, which wraps to INT32_MIN; once more gives INT32_MIN + 2^19.
  auto mxu = Make(Array(32, 2));
  Ok(*mxu, MxuOp::LoadWeightsInt8(32, 2, std::vector<int8_t>(64, -128)));
  const std::vector<int8_t> lhs(32, -128);
  Ok(*mxu, MxuOp::MatMulInt8(1, 32, lhs, true, false, 0));
  EXPECT_EQ(mxu->accumulators().s32(0, 0), 1 << 19);
  for (int i = 1; i < 4096; ++i) Ok(*mxu, MxuOp::MatMulInt8(1, 32, lhs, false, true, 0));
  EXPECT_EQ(mxu->accumulators().s32(0, 1), std::numeric_limits<int32_t>::min());
  Ok(*mxu, MxuOp::MatMulInt8(1, 32, lhs, false, true, 0));
  EXPECT_EQ(mxu->accumulators().s32(0, 0), std::numeric_limits<int32_t>::min() + (1 << 19));
  // Signed products: 127 * -128 + (-1) * 127 = -16383.
  Ok(*mxu, MxuOp::LoadWeightsInt8(2, 1, {-128, 127}));
  Ok(*mxu, MxuOp::MatMulInt8(1, 2, {127, -1}, true, false, 1));
  EXPECT_EQ(mxu->accumulators().s32(1, 0), -16383);
}

TEST_P(MxuValuesTest, MatchesTripleLoopOnRandomFullTiles) {
  std::mt19937_64 rng(7);
  const MxuArrayConfig cfg = Array(8, 8);
  auto mxu = Make(cfg);
  testing::MxuReference ref(cfg, 8);
  std::vector<MxuOp> ops = {
      MxuOp::LoadWeights(8, 8, testing::RandomBf16s(rng, 64, false)),
      MxuOp::MatMul(8, 8, testing::RandomBf16s(rng, 64, false), true, false, 0),
      MxuOp::LoadWeights(8, 8, testing::RandomBf16s(rng, 64, false)),
      MxuOp::MatMul(8, 8, testing::RandomBf16s(rng, 64, false), true, true, 0),
  };
  for (const MxuOp& op : ops) {
    Ok(*mxu, op);
    ref.Apply(op);
  }
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) EXPECT_EQ(mxu->accumulators().word(r, c), ref.word(r, c));
  }
}

TEST_P(MxuValuesTest, ErrorsLeaveTheModelUnchanged) {
  auto mxu = Make(Array(4, 4));
  auto expect_invalid = [&](const MxuOp& op, const char* what) {
    auto t = mxu->Issue(op, Cycles(0));
    ASSERT_FALSE(t.ok()) << what;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << what;
    EXPECT_FALSE(t.status().message().empty());
  };
  expect_invalid(MxuOp::MatMul(1, 4, std::vector<float>(4), true, false, 0), "no tile loaded");
  expect_invalid(MxuOp::LoadWeights(5, 4, std::vector<float>(20)), "K > R");
  expect_invalid(MxuOp::LoadWeights(4, 5, std::vector<float>(20)), "N > C");
  expect_invalid(MxuOp::LoadWeights(0, 4, {}), "K = 0");
  expect_invalid(MxuOp::LoadWeights(4, 4, std::vector<float>(15)), "too few values");
  Ok(*mxu, MxuOp::LoadWeights(4, 4, std::vector<float>(16, 1.0f)));
  expect_invalid(MxuOp::MatMul(0, 4, {}, true, false, 0), "M = 0");
  expect_invalid(MxuOp::MatMul(1, 5, std::vector<float>(5), true, false, 0), "K > R");
  expect_invalid(MxuOp::MatMul(2, 4, std::vector<float>(8), true, false, 7), "acc rows 7..8 of 8");
  expect_invalid(MxuOp::MatMulInt8(1, 4, std::vector<int8_t>(4), true, false, 0), "int8 on bf16");
  // The rejected ops left no trace: the swap still finds the tile, at the cycle it would anyway.
  auto t = mxu->Issue(MxuOp::MatMul(1, 4, std::vector<float>(4, 1.0f), true, false, 0), Cycles(0));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->start.value(), 4u);
  EXPECT_EQ(mxu->accumulators().f32(0, 3), 4.0f);
  EXPECT_EQ(mxu->counters().matmuls, 1u);
  EXPECT_EQ(mxu->counters().weight_loads, 1u);
}

TEST_P(MxuValuesTest, UnboundedAccumulatorsGrowAsWritten) {
  MxuArrayConfig cfg = Array(2, 2);
  cfg.accumulator_rows = 0;  // unbounded
  auto mxu = Make(cfg);
  Ok(*mxu, MxuOp::LoadWeights(2, 2, {1.0f, 0.0f, 0.0f, 1.0f}));  // identity
  Ok(*mxu, MxuOp::MatMul(2, 2, {1.0f, 2.0f, 3.0f, 4.0f}, true, false, 100));
  const MxuAccumulators& acc = mxu->accumulators();
  ASSERT_EQ(acc.rows(), 102);
  EXPECT_EQ(acc.f32(100, 0), 1.0f);
  EXPECT_EQ(acc.f32(100, 1), 2.0f);
  EXPECT_EQ(acc.f32(101, 0), 3.0f);
  EXPECT_EQ(acc.f32(101, 1), 4.0f);
}

TEST_P(MxuValuesTest, SmallerLhsWidthThanTileUsesOnlyItsRows) {
  // Tile K = 3, matmul K = 2: weight row 2 is not used (its LHS lane carries no data), so an inf
  // there does not turn the result into NaN. Matmul K = 3 > tile K = 2 would use the zero padding
  // instead.
  auto mxu = Make(Array(3, 1));
  Ok(*mxu, MxuOp::LoadWeights(3, 1, {2.0f, 3.0f, kInf}));
  Ok(*mxu, MxuOp::MatMul(1, 2, {1.0f, 1.0f}, true, false, 0));
  EXPECT_EQ(mxu->accumulators().f32(0, 0), 5.0f);
  Ok(*mxu, MxuOp::LoadWeights(2, 1, {2.0f, 3.0f}));
  Ok(*mxu, MxuOp::MatMul(1, 3, {1.0f, 1.0f, kInf}, true, false, 1));
  EXPECT_TRUE(
      std::isnan(mxu->accumulators().f32(1, 0)));  // inf * (padding 0) = NaN, as in hardware
}

INSTANTIATE_TEST_SUITE_P(Models, MxuValuesTest,
                         ::testing::Values(MxuModelKind::kPe, MxuModelKind::kFast),
                         [](const auto& info) {
                           return info.param == MxuModelKind::kPe ? std::string("Pe")
                                                                  : std::string("Fast");
                         });

TEST(MxuArrayConfigTest, ValidateNamesTheKey) {
  MxuArrayConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.weight_buffers = 3;
  EXPECT_NE(c.Validate().message().find("core.mxu.weight_buffers"), std::string::npos);
  c = MxuArrayConfig{};
  c.rows = 0;
  EXPECT_NE(c.Validate().message().find("core.mxu.rows"), std::string::npos);
  c = MxuArrayConfig{};
  c.weight_load_cycles_per_row = 0;
  EXPECT_FALSE(CreateMxuModel(MxuModelKind::kFast, c).ok());
  // The ranges are the schema's (config::CheckConfigRange), upper ends included, in its words.
  c = MxuArrayConfig{};
  c.cols = 4097;
  EXPECT_EQ(c.Validate().message(),
            "core.mxu.cols: expected a positive integer at most 4096, got 4097");
  c = MxuArrayConfig{};
  c.accumulator_rows = 0;  // unbounded: the array's own convention
  EXPECT_TRUE(c.Validate().ok());
  c.accumulator_rows = -1;
  EXPECT_NE(c.Validate().message().find("core.mxu.accumulator_rows: expected a positive integer"),
            std::string::npos);
  config::MxuConfig yaml;  // the config struct's defaults map across
  yaml.rows = 256;
  yaml.weight_buffers = 1;
  const MxuArrayConfig from = MxuArrayConfig::FromConfig(yaml);
  EXPECT_EQ(from.rows, 256);
  EXPECT_EQ(from.weight_buffers, 1);
  EXPECT_EQ(from.WeightLoadCycles().value(), 256u);
}

}  // namespace
}  // namespace tpusim::sim
