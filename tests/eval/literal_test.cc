#include "hlo/eval/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "hlo/eval/convert.h"
#include "hlo/eval/npy.h"

namespace tpusim::hlo {
namespace {

TEST(LiteralTest, MultiIndexIsRowMajor) {
  Literal l = Literal::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  const int64_t idx[] = {1, 2};
  EXPECT_EQ(l.LinearIndex(idx), 5);  // 1 * 3 + 2
  EXPECT_EQ(l.Get<float>(idx), 5.0f);
}

TEST(LiteralTest, CreateOverLimitIsResourceExhaustedNamingShape) {
  auto r = Literal::Create(Shape(PrimitiveType::kF32, {1024, 32, 4096, 4096}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("f32[1024,32,4096,4096]"), std::string::npos);
  EXPECT_NE(r.status().message().find("4294967296"), std::string::npos);  // the 4 GiB limit
}

TEST(LiteralTest, CopyOnWriteKeepsOriginal) {
  Literal a = Literal::FromVector<int32_t>({2}, {1, 2});
  Literal b = a;
  b.mutable_data<int32_t>()[0] = 7;
  EXPECT_EQ(a.data<int32_t>()[0], 1);
  EXPECT_EQ(b.data<int32_t>()[0], 7);
}

TEST(ConvertTest, FloatToIntSaturatesAndNanIsZero) {
  // XLA convert (fptosi.sat): truncation toward zero, NaN -> 0, saturation at the integer range.
  EXPECT_EQ(ConvertElement<int32_t>(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(ConvertElement<int32_t>(3e9f), INT32_MAX);
  EXPECT_EQ(ConvertElement<int32_t>(-3e9f), INT32_MIN);
  EXPECT_EQ(ConvertElement<int32_t>(-2.7f), -2);
  EXPECT_EQ(ConvertElement<uint8_t>(-5.0f), 0);
  EXPECT_EQ(ConvertElement<uint8_t>(300.0f), 255);
  EXPECT_EQ(ConvertElement<int8_t>(std::numeric_limits<float>::infinity()), 127);
  EXPECT_EQ(ConvertElement<int64_t>(1e19), INT64_MAX);                     // 1e19 > 2^63
  EXPECT_EQ(ConvertElement<uint64_t>(1.8446744073709552e19), UINT64_MAX);  // == 2^64
}

TEST(ConvertTest, IntToIntWraps) {
  EXPECT_EQ(ConvertElement<int8_t>(int32_t{200}), -56);  // 200 - 256
  EXPECT_EQ(ConvertElement<uint8_t>(int32_t{-1}), 255);
}

TEST(ConvertTest, Bf16RoundsToNearestEven) {
  // bf16 has 7 fraction bits: spacing 2^-7 in [1, 2). 1 + 2^-8 is a tie between 1 and 1 + 2^-7 ->
  // even (1.0); 1 + 3*2^-8 is a tie between 1 + 2^-7 and 1 + 2^-6 -> even (1 + 2^-6).
  EXPECT_EQ(static_cast<float>(ConvertElement<Eigen::bfloat16>(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(static_cast<float>(ConvertElement<Eigen::bfloat16>(1.0f + 3 * 0x1p-8f)),
            1.0f + 0x1p-6f);
  // From f64 in one rounding (no double rounding through f32): 1 + 2^-8 + 2^-40 is above the tie.
  EXPECT_EQ(static_cast<float>(ConvertElement<Eigen::bfloat16>(1.0 + 0x1p-8 + 0x1p-40)),
            1.0f + 0x1p-7f);
  // int -> bf16: 257 is a tie between 256 and 258 -> 256 (even mantissa).
  EXPECT_EQ(static_cast<float>(ConvertElement<Eigen::bfloat16>(int32_t{257})), 256.0f);
  // Overflow: above the largest bf16 (~3.3895e38) rounds to inf.
  EXPECT_TRUE(std::isinf(static_cast<float>(ConvertElement<Eigen::bfloat16>(3.4e38))));
}

TEST(ConvertTest, PredRules) {
  EXPECT_TRUE(ConvertElement<bool>(std::numeric_limits<float>::quiet_NaN()));  // NaN != 0
  EXPECT_FALSE(ConvertElement<bool>(-0.0f));
  EXPECT_EQ(ConvertElement<float>(true), 1.0f);
}

TEST(NpyTest, RoundTripEveryType) {
  const std::string dir = ::testing::TempDir() + "/npy_rt";
  std::filesystem::create_directories(dir);
  for (PrimitiveType t :
       {PrimitiveType::kPred, PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32,
        PrimitiveType::kS64, PrimitiveType::kU8, PrimitiveType::kU16, PrimitiveType::kU32,
        PrimitiveType::kU64, PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32,
        PrimitiveType::kF64}) {
    SCOPED_TRACE(PrimitiveTypeName(t));
    auto lit = Literal::Create(Shape(t, {3, 5}));
    ASSERT_TRUE(lit.ok());
    FillRandom(*lit, 11, "npy");
    const std::string path = dir + "/x.npy";
    ASSERT_TRUE(WriteNpy(path, *lit).ok());
    auto back = ReadNpyAs(path, Shape(t, {3, 5}));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(back->BitwiseEqual(*lit));
  }
}

TEST(NpyTest, HeaderIsNumpyV1AndAligned) {
  Literal l = Literal::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto bytes = EncodeNpy(l);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 6), "\x93NUMPY");
  EXPECT_EQ((*bytes)[6], 1);
  const size_t header_len =
      static_cast<uint8_t>((*bytes)[8]) | (static_cast<uint8_t>((*bytes)[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_NE(bytes->find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(bytes->find("'shape': (2, 3)"), std::string::npos);
  EXPECT_EQ(bytes->size(), 10 + header_len + 24);
}

TEST(NpyTest, ShapeMismatchNamesFile) {
  const std::string path = ::testing::TempDir() + "/mismatch.npy";
  ASSERT_TRUE(WriteNpy(path, Literal::FromVector<float>({2}, {1, 2})).ok());
  auto r = ReadNpyAs(path, Shape(PrimitiveType::kF32, {3}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mismatch.npy"), std::string::npos);
}

TEST(LiteralTest, FillRandomIsDeterministicAndInRange) {
  auto a = Literal::Create(Shape(PrimitiveType::kF32, {1000}));
  auto b = Literal::Create(Shape(PrimitiveType::kF32, {1000}));
  FillRandom(*a, 3, "x");
  FillRandom(*b, 3, "x");
  EXPECT_TRUE(a->BitwiseEqual(*b));
  EXPECT_EQ(a->Checksum(), b->Checksum());
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_GE(a->GetAsDouble(i), -1.0);
    EXPECT_LT(a->GetAsDouble(i), 1.0);
  }
  FillRandom(*b, 4, "x");
  EXPECT_FALSE(a->BitwiseEqual(*b));
}

}  // namespace
}  // namespace tpusim::hlo
