// isa/collectives.h: the values of the ICI collectives on byte buffers, independent of how a ring
// moves them — reductions in rank order with one rounding at the end (f32 accumulators for float
// types, wrap-around for integers, or/and for pred), reduce-scatter's chunks, all-to-all's chunk
// exchange, and the collective-permute source table. The instructions that use them are tested in
// execute_collective_test.cc.
#include "isa/collectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/numerics.h"

namespace tpusim::isa {
namespace {

std::string Floats(DType t, const std::vector<float>& v) {
  std::string s(v.size() * DTypeBytes(t), '\0');
  for (size_t i = 0; i < v.size(); ++i) StoreFloat(s.data() + i * DTypeBytes(t), t, v[i]);
  return s;
}

std::string Ints(DType t, const std::vector<int64_t>& v) {
  std::string s(v.size() * DTypeBytes(t), '\0');
  for (size_t i = 0; i < v.size(); ++i) StoreInt(s.data() + i * DTypeBytes(t), t, v[i]);
  return s;
}

std::vector<float> ReadFloats(DType t, const std::string& s) {
  std::vector<float> v(s.size() / DTypeBytes(t));
  for (size_t i = 0; i < v.size(); ++i) v[i] = LoadFloat(s.data() + i * DTypeBytes(t), t);
  return v;
}

std::vector<int64_t> ReadInts(DType t, const std::string& s) {
  std::vector<int64_t> v(s.size() / DTypeBytes(t));
  for (size_t i = 0; i < v.size(); ++i) v[i] = LoadInt(s.data() + i * DTypeBytes(t), t);
  return v;
}

std::string Reduce(const CollectiveArgs& a, uint64_t elements,
                   const std::vector<std::string>& ranks, uint64_t begin, uint64_t count) {
  RankReduction red(a, elements);
  for (const std::string& r : ranks) red.Fold(r);
  std::string out;
  red.Store(begin, count, out);
  return out;
}

// bf16 sums in f32 and rounds once: 1 + 3 * 2^-9 = 1.005859375 rounds to 1 + 2^-7 in bf16, where
// rounding after each rank would leave 1 (each 2^-9 is below half of bf16's 2^-7 step at 1).
TEST(RankReductionTest, Bf16SumsInF32AndRoundsOnceAtTheEnd) {
  const DType t = DType::kBF16;
  const float e = std::ldexp(1.0f, -9);
  const std::vector<std::string> ranks = {Floats(t, {1.0f, 2.0f}), Floats(t, {e, -0.5f}),
                                          Floats(t, {e, 0.25f}), Floats(t, {e, 8.0f})};
  const std::string out = Reduce({t, 2, ReduceOp::kSum}, 2, ranks, 0, 2);
  EXPECT_EQ(ReadFloats(t, out), (std::vector<float>{1.0f + std::ldexp(1.0f, -7), 9.75f}));
}

// f32 folds in rank order: (2^24 + 1) rounds to 2^24 (a tie, to even), and so does the next + 1,
// so ranks [2^24, 1, 1] sum to 2^24; adding the two ones first would give 2^24 + 2.
TEST(RankReductionTest, F32FoldsInRankOrder) {
  const DType t = DType::kF32;
  const float big = std::ldexp(1.0f, 24);
  const std::string out = Reduce({t, 1, ReduceOp::kSum}, 1,
                                 {Floats(t, {big}), Floats(t, {1.0f}), Floats(t, {1.0f})}, 0, 1);
  EXPECT_EQ(ReadFloats(t, out)[0], big);
}

TEST(RankReductionTest, MaxAndMinPerElement) {
  const DType t = DType::kF32;
  const std::vector<std::string> ranks = {Floats(t, {1, -4, 0}), Floats(t, {3, -5, -0.5f}),
                                          Floats(t, {2, -1, 0.5f})};
  EXPECT_EQ(ReadFloats(t, Reduce({t, 3, ReduceOp::kMax}, 3, ranks, 0, 3)),
            (std::vector<float>{3, -1, 0.5f}));
  EXPECT_EQ(ReadFloats(t, Reduce({t, 3, ReduceOp::kMin}, 3, ranks, 0, 3)),
            (std::vector<float>{1, -5, -0.5f}));
}

TEST(RankReductionTest, IntegersWrapAtTheirWidth) {
  const DType s8 = DType::kS8;
  const std::string out = Reduce({s8, 2, ReduceOp::kSum}, 2,
                                 {Ints(s8, {100, -128}), Ints(s8, {100, -1})}, 0, 2);
  EXPECT_EQ(ReadInts(s8, out), (std::vector<int64_t>{-56, 127}));  // 200 - 256, -129 + 256
  const DType s32 = DType::kS32;
  const std::string big = Reduce({s32, 1, ReduceOp::kSum}, 1,
                                 {Ints(s32, {INT32_MAX}), Ints(s32, {1})}, 0, 1);
  EXPECT_EQ(ReadInts(s32, big), (std::vector<int64_t>{INT32_MIN}));
  const DType u8 = DType::kU8;
  EXPECT_EQ(ReadInts(u8, Reduce({u8, 1, ReduceOp::kMax}, 1, {Ints(u8, {200}), Ints(u8, {7})}, 0,
                                1)),
            (std::vector<int64_t>{200}));  // unsigned: 200 is not -56
}

TEST(RankReductionTest, PredSumAndMaxAreOrAndMinIsAnd) {
  const DType t = DType::kPred;
  const std::vector<std::string> ranks = {Ints(t, {0, 1, 0, 1}), Ints(t, {0, 0, 1, 1})};
  EXPECT_EQ(ReadInts(t, Reduce({t, 4, ReduceOp::kSum}, 4, ranks, 0, 4)),
            (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ReadInts(t, Reduce({t, 4, ReduceOp::kMax}, 4, ranks, 0, 4)),
            (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ReadInts(t, Reduce({t, 4, ReduceOp::kMin}, 4, ranks, 0, 4)),
            (std::vector<int64_t>{0, 0, 0, 1}));
}

// reduce-scatter over 3 ranks of 3 * 2 elements: rank r stores chunk r of the sum.
TEST(RankReductionTest, StoreTakesOneChunkOfTheReduction) {
  const DType t = DType::kS32;
  const std::vector<std::string> ranks = {Ints(t, {1, 2, 3, 4, 5, 6}),
                                          Ints(t, {10, 20, 30, 40, 50, 60}),
                                          Ints(t, {100, 200, 300, 400, 500, 600})};
  const CollectiveArgs a{t, 2, ReduceOp::kSum};
  EXPECT_EQ(ReadInts(t, Reduce(a, 6, ranks, 0, 2)), (std::vector<int64_t>{111, 222}));
  EXPECT_EQ(ReadInts(t, Reduce(a, 6, ranks, 2, 2)), (std::vector<int64_t>{333, 444}));
  EXPECT_EQ(ReadInts(t, Reduce(a, 6, ranks, 4, 2)), (std::vector<int64_t>{555, 666}));
}

TEST(RankReductionTest, OneRankIsItsOwnInputRoundedToTheType) {
  const DType t = DType::kF16;
  const std::string in = Floats(t, {0.1f, -65504.0f});
  EXPECT_EQ(Reduce({t, 2, ReduceOp::kSum}, 2, {in}, 0, 2), in);
}

// all-to-all over 3 ranks, count 2: rank r's output is chunk r of every rank's input, in rank
// order.
TEST(AllToAllOutputTest, RankRGetsChunkRFromEveryRank) {
  const DType t = DType::kS32;
  std::vector<std::string> in;
  for (int q = 0; q < 3; ++q) {
    std::vector<int64_t> v;
    for (int c = 0; c < 3; ++c) v.insert(v.end(), {10 * q + c, -(10 * q + c)});
    in.push_back(Ints(t, v));
  }
  const CollectiveArgs a{t, 2, ReduceOp::kSum};
  EXPECT_EQ(ReadInts(t, AllToAllOutput(in, a, 0)),
            (std::vector<int64_t>{0, 0, 10, -10, 20, -20}));
  EXPECT_EQ(ReadInts(t, AllToAllOutput(in, a, 2)),
            (std::vector<int64_t>{2, -2, 12, -12, 22, -22}));
}

TEST(PermuteSourcesTest, EachTargetGetsItsSourceAndOthersMinusOne) {
  auto s = PermuteSources(4, {{0, 1}, {1, 2}, {2, 0}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(*s, (std::vector<int>{2, 0, 1, -1}));  // rank 3 is no target: it receives zeros
  auto none = PermuteSources(2, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, (std::vector<int>{-1, -1}));
  auto self = PermuteSources(1, {{0, 0}});
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(*self, (std::vector<int>{0}));
}

TEST(PermuteSourcesTest, ATargetOfTwoPairsIsAnError) {
  auto s = PermuteSources(3, {{0, 2}, {1, 2}});
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "collective_permute: rank 2 is the target of two pairs");
}

}  // namespace
}  // namespace tpusim::isa
