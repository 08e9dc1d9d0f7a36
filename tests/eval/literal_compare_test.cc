// The functional check's comparison rule (hlo/eval/literal_compare.h): NaN equals NaN, equal
// infinities are equal, else |got - want| <= atol + rtol * |want|; an element non-finite on one
// side only is a mismatch kept out of the max abs / rel figures.
#include "hlo/eval/literal_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tpusim::hlo {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(LiteralCompareTest, WithinToleranceIsAbsolutePlusRelative) {
  EXPECT_TRUE(WithinTolerance(1.0, 1.0, 0, 0));
  EXPECT_TRUE(WithinTolerance(1.05, 1.0, 0, 0.1));
  EXPECT_FALSE(WithinTolerance(1.2, 1.0, 0, 0.1));
  EXPECT_TRUE(WithinTolerance(0.001, 0.0, 0.01, 0.5));
  EXPECT_FALSE(WithinTolerance(0.1, 0.0, 0.01, 0.5));  // rtol scales |want|, not |got|
  EXPECT_TRUE(WithinTolerance(std::nan(""), std::nan(""), 0, 0));
  EXPECT_TRUE(WithinTolerance(INFINITY, INFINITY, 0, 0));
  EXPECT_FALSE(WithinTolerance(std::nan(""), 1.0, 1e9, 0));
  EXPECT_FALSE(WithinTolerance(INFINITY, 1.0, 1e9, 1e9));
  // A reference of +-inf makes atol + rtol * |want| infinite: it must not pass everything.
  EXPECT_FALSE(WithinTolerance(1.0, INFINITY, 1e-4, 1e-3));
  EXPECT_FALSE(WithinTolerance(-INFINITY, INFINITY, 1e-4, 1e-3));
  EXPECT_FALSE(WithinTolerance(std::nan(""), -INFINITY, 1e-4, 1e-3));
  EXPECT_TRUE(WithinTolerance(-INFINITY, -INFINITY, 1e-4, 1e-3));
}

TEST(LiteralCompareTest, StatsAccumulateOverLiteralsAndNameTheFirstMismatch) {
  LiteralErrorStats s;
  const Literal want = Literal::FromVector<float>({4}, {1, -2, 0, 8});
  const Literal got = Literal::FromVector<float>({4}, {1, -2.5f, 0.25f, 8});
  ASSERT_TRUE(CompareLiterals(got, want, 0.3, 0, "out", s).ok());
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.25);  // 0.5 / 2; the element with want 0 has no relative error
  EXPECT_DOUBLE_EQ(s.max_ref, 8);
  EXPECT_EQ(s.mismatches, 1);  // -2.5 vs -2 (0.5 > 0.3); 0.25 vs 0 is within 0.3
  EXPECT_EQ(s.first_mismatch, "out element 1: simulated -2.5 but the evaluator gives -2");
  ASSERT_TRUE(CompareLiterals(got, want, 0.1, 0, "again", s).ok());
  EXPECT_EQ(s.mismatches, 3);
  EXPECT_EQ(s.first_mismatch, "out element 1: simulated -2.5 but the evaluator gives -2");
}

TEST(LiteralCompareTest, NonFiniteOnOneSideIsCountedNotAMagnitude) {
  LiteralErrorStats s;
  const Literal want = Literal::FromVector<float>({5}, {kInf, kNan, 3, -5, kInf});
  const Literal got = Literal::FromVector<float>({5}, {kInf, kNan, kInf, kNan, 1});
  ASSERT_TRUE(CompareLiterals(got, want, 1e-3, 1e-3, "y", s).ok());
  EXPECT_EQ(s.non_finite, 3);
  EXPECT_EQ(s.mismatches, 3);  // 1 against a reference of inf is a mismatch too
  EXPECT_EQ(s.max_abs, 0);
  EXPECT_EQ(s.max_rel, 0);
  EXPECT_DOUBLE_EQ(s.max_ref, 5);  // the largest finite |reference|
}

Literal Bf16(const std::vector<double>& values) {
  auto lit = Literal::Create(Shape(PrimitiveType::kBF16, {static_cast<int64_t>(values.size())}));
  EXPECT_TRUE(lit.ok());
  for (size_t i = 0; i < values.size(); ++i) lit->SetFromDouble(static_cast<int64_t>(i), values[i]);
  return std::move(lit).value();
}

TEST(LiteralCompareTest, NarrowFloatOutputsAllowOneUnitInTheLastPlace) {
  EXPECT_EQ(OutputTypeRelativeUlp(PrimitiveType::kBF16), 0x1p-7);
  EXPECT_EQ(OutputTypeRelativeUlp(PrimitiveType::kF16), 0x1p-10);
  EXPECT_EQ(OutputTypeRelativeUlp(PrimitiveType::kF8E4M3FN), 0x1p-3);
  EXPECT_EQ(OutputTypeRelativeUlp(PrimitiveType::kF32), 0);
  EXPECT_EQ(OutputTypeRelativeUlp(PrimitiveType::kS32), 0);
  // bf16 near 19: neighbouring values are 0.125 apart (0.0065 relative, over rtol 1e-3). An f32
  // sum a different tiling rounds to the neighbour is no error; two units apart is.
  LiteralErrorStats one;
  ASSERT_TRUE(CompareLiterals(Bf16({19.25, 2}), Bf16({19.125, 2}), 1e-4, 1e-3, "y", one).ok());
  EXPECT_EQ(one.mismatches, 0);
  EXPECT_DOUBLE_EQ(one.max_abs, 0.125);
  LiteralErrorStats two;
  ASSERT_TRUE(CompareLiterals(Bf16({19.375, 2}), Bf16({19.125, 2}), 1e-4, 1e-3, "y", two).ok());
  EXPECT_EQ(two.mismatches, 1);
  // f32 keeps rtol as given: the same 0.0065 relative difference is a mismatch.
  LiteralErrorStats f32;
  ASSERT_TRUE(CompareLiterals(Literal::FromVector<float>({1}, {19.25f}),
                              Literal::FromVector<float>({1}, {19.125f}), 1e-4, 1e-3, "y", f32)
                  .ok());
  EXPECT_EQ(f32.mismatches, 1);
}

TEST(LiteralCompareTest, ElementCountMismatchIsInternal) {
  LiteralErrorStats s;
  const Status st = CompareLiterals(Literal::FromVector<float>({2}, {1, 2}),
                                    Literal::FromVector<float>({3}, {1, 2, 3}), 0, 0, "z", s);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("z: the simulated value has 2 elements but the reference 3"),
            std::string::npos);
}

}  // namespace
}  // namespace tpusim::hlo
