// dynamic-padder: a bounded dynamic dimension is a buffer of its bound whose first `size`
// elements are valid. A size equal to the bound changes no value; a size below it is followed to
// every reduce, dot, get-dimension-size and output, on the evaluator (after the pass) and on the
// device (the pipeline runs it) alike, with values computed here by hand; what the padder does
// not handle is a located error.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/passes/dynamic_padder.h"
#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;

class DynamicPadderBoundTest : public ::testing::TestWithParam<int> {};

TEST_P(DynamicPadderBoundTest, ASizeEqualToTheBoundIsRemoved) {
  const int d = GetParam();
  const std::string dims = d == 0 ? "<=16,128" : "16,<=128";
  const std::string n = d == 0 ? "16" : "128";
  const std::string dd = std::to_string(d);
  const std::string kept = d == 0 ? "128" : "16";  // the dimension the reduce keeps
  ExpectSameBits("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                 "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[16,128] parameter(0)\n"
                 "  n = s32[] constant(" + n + ")\n  s = f32[" + dims +
                 "] set-dimension-size(p, n), dimensions={" + dd + "}\n  e = f32[" + dims +
                 "] exponential(s)\n  z = f32[] constant(0)\n  r = f32[" +
                 kept + "] reduce(e, z), dimensions={" + dd + "}, to_apply=add\n  ROOT t = (f32[" +
                 dims + "], f32[" + kept + "]) tuple(e, r)\n}\n");
}

INSTANTIATE_TEST_SUITE_P(Dimensions, DynamicPadderBoundTest, ::testing::Values(0, 1));

// The values of `text` with `args`: (a) the evaluator on the module after DynamicPadder, (b) the
// device (tiny config), whose pipeline pads; both must equal `want` (one leaf per output).
void ExpectValues(const std::string& text, const std::vector<hlo::Literal>& args,
                  const std::vector<std::vector<float>>& want) {
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto device = testing::CompileAndRun(*m, testing::Config("tiny"), {args});
  ASSERT_TRUE(device.ok()) << device.status().message();
  DynamicPadder padder;
  auto changed = padder.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_FALSE(HasDynamicShapes(*m));
  hlo::Evaluator ev;
  auto out = ev.Evaluate(*m, args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::vector<const hlo::Literal*> leaves = out->Leaves();
  ASSERT_EQ(leaves.size(), want.size());
  ASSERT_EQ(device->outputs.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(leaves[k]->element_count(), static_cast<int64_t>(want[k].size())) << "output " << k;
    for (size_t i = 0; i < want[k].size(); ++i) {
      const int64_t e = static_cast<int64_t>(i);
      EXPECT_EQ(leaves[k]->GetAsDouble(e), want[k][i])
          << "evaluator output " << k << " [" << i << "]";
      EXPECT_EQ(device->outputs[k].GetAsDouble(e), want[k][i])
          << "device output " << k << " [" << i << "]";
    }
  }
}

std::vector<float> Iota(int n, float from = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = from + static_cast<float>(i);
  return v;
}

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(DynamicPadderTest, AReduceSumsOnlyTheValidPrefixAndASizeIsClampedToItsBound) {
  const std::string text = std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = f32[16] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=16] set-dimension-size(x, n), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(d, z), dimensions={0}, to_apply=add
})";
  const hlo::Literal x = hlo::Literal::FromVector<float>({16}, Iota(16));
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(5)}, {{15}});     // 1 + .. + 5
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(0)}, {{0}});
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(40)}, {{136}});   // clamped to 16
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(-3)}, {{0}});     // clamped to 0
}

TEST(DynamicPadderTest, SizesFollowElementwiseOpsBroadcastsAndTransposesToTheOutputs) {
  // get-dimension-size reads the size; the [<=4,3] output reads zeros past row n; the reduce over
  // the dynamic dimension of the transposed broadcast counts n rows of 3.
  const std::string text = std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(x, n), dimensions={0}
  one = f32[] constant(1)
  ones = f32[<=4] broadcast(one), dimensions={}
  y = f32[<=4] add(d, ones)
  b = f32[<=4,3] broadcast(y), dimensions={0}
  t = f32[3,<=4] transpose(b), dimensions={1,0}
  z = f32[] constant(0)
  s = f32[3] reduce(t, z), dimensions={1}, to_apply=add
  g = s32[] get-dimension-size(t), dimensions={1}
  gf = f32[] convert(g)
  ROOT out = (f32[<=4,3], f32[3], f32[]) tuple(b, s, gf)
})";
  const hlo::Literal x = hlo::Literal::FromVector<float>({4}, {10, 20, 30, 40});
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(2)},
               {{11, 11, 11, 21, 21, 21, 0, 0, 0, 0, 0, 0}, {32, 32, 32}, {2}});
}

TEST(DynamicPadderTest, ADynamicReshapeOfTheMajorDimensionKeepsTheValidPrefix) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  y = f32[<=4,8] set-dimension-size(x, a), dimensions={0}
  m = s32[] multiply(a, b)
  ROOT r = f32[<=32] dynamic-reshape(y, m)
})";
  std::vector<float> want = Iota(16);
  want.resize(32, 0.0f);
  ExpectValues(text,
               {hlo::Literal::FromVector<float>({4, 8}, Iota(32)), hlo::Literal::Scalar<int32_t>(2),
                hlo::Literal::Scalar<int32_t>(8)},
               {want});
}

TEST(DynamicPadderTest, ADotContractingADynamicDimensionReadsZerosInThePadding) {
  // lhs [2,<=4] with 3 valid columns . rhs [4,2]: the fourth column (100, 1000) must not count.
  const std::string text = R"(HloModule m
ENTRY e {
  l = f32[2,4] parameter(0)
  r = f32[4,2] parameter(1)
  n = s32[] constant(3)
  d = f32[2,<=4] set-dimension-size(l, n), dimensions={1}
  ROOT o = f32[2,2] dot(d, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  ExpectValues(text,
               {hlo::Literal::FromVector<float>({2, 4}, {1, 2, 3, 100, 4, 5, 6, 1000}),
                hlo::Literal::FromVector<float>({4, 2}, {1, 0, 0, 1, 1, 1, 1, 1})},
               {{4, 5, 10, 11}});  // [1+3, 2+3], [4+6, 5+6]
  // The static side is masked too: an inf in its padding row would make inf x 0 = NaN.
  ExpectValues(text,
               {hlo::Literal::FromVector<float>({2, 4}, {1, 2, 3, 100, 4, 5, 6, 1000}),
                hlo::Literal::FromVector<float>({4, 2}, {1, 0, 0, 1, 1, 1, INFINITY, INFINITY})},
               {{4, 5, 10, 11}});
}

TEST(DynamicPadderTest, AParameterWithABoundIsGivenWhole) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,<=3] parameter(0)
  g = s32[] get-dimension-size(x), dimensions={1}
  ROOT f = f32[] convert(g)
})";
  ExpectValues(text, {hlo::Literal::FromVector<float>({2, 3}, Iota(6))}, {{3}});
}

// A variadic reduce (argmax) whose second operand carries the size: both operands are masked by
// the one size, each with its own init.
TEST(DynamicPadderTest, AVariadicReduceMasksEveryOperand) {
  const std::string text = R"(HloModule m
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = f32[] select(ge, a, b)
  i = s32[] select(ge, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[6] parameter(0)
  n = s32[] parameter(1)
  idx = s32[6] iota(), iota_dimension=0
  d = s32[<=6] set-dimension-size(idx, n), dimensions={0}
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[], s32[]) reduce(x, d, ninf, zero), dimensions={0}, to_apply=argmax
})";
  // The largest of the first 3 values is 7 at index 1 (9 at index 4 is padding).
  ExpectValues(text,
               {hlo::Literal::FromVector<float>({6}, {1, 7, 3, 2, 9, 0}),
                hlo::Literal::Scalar<int32_t>(3)},
               {{7}, {1}});
}

// The size ops of a static module, in any computation, are the padder's too (one place: canonicalize
// no longer rewrites them): get-dimension-size becomes the constant size, set-dimension-size to the
// bound its operand, dynamic-reshape to a static shape a reshape; values unchanged.
TEST(DynamicPadderTest, StaticSizeOpsInEveryComputationBecomeConstantsAndReshapes) {
  DynamicPadder padder;
  auto m = testing::ExpectRewriteKeepsBits(padder, R"(HloModule m
body {
  x = f32[4,8] parameter(0)
  n = s32[] constant(4)
  s = f32[<=4,8] set-dimension-size(x, n), dimensions={0}
  g = s32[] get-dimension-size(s), dimensions={1}
  e = s32[] constant(32)
  r = f32[32] dynamic-reshape(s, e)
  gf = f32[] convert(g)
  b = f32[32] broadcast(gf), dimensions={}
  ROOT o = f32[32] add(r, b)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT c = f32[32] call(p), to_apply=body
})");
  ASSERT_NE(m, nullptr);
  for (auto op : {hlo::HloOpcode::kGetDimensionSize, hlo::HloOpcode::kSetDimensionSize,
                  hlo::HloOpcode::kDynamicReshape}) {
    EXPECT_EQ(testing::CountOpcode(*m, op), 0) << hlo::HloOpcodeString(op);
  }
  EXPECT_FALSE(HasDynamicShapes(*m));
}

// The custom-calls XLA's dynamic padder writes at the edges of dynamic code (GPU/TPU dumps after
// optimization): SliceToDynamic(data, sizes...) gives data the sizes of its `<=` dimensions,
// PadToStatic(x) gives x's buffer and the size of each dimension.
TEST(DynamicPadderTest, SliceToDynamicAndPadToStaticCarryTheSizes) {
  const std::string text = std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = f32[6,2] parameter(0)
  n = s32[] parameter(1)
  two = s32[] constant(2)
  d = f32[<=6,2] custom-call(x, n, two), custom_call_target="SliceToDynamic"
  z = f32[] constant(0)
  r = f32[2] reduce(d, z), dimensions={0}, to_apply=add
  e = f32[<=6,2] negate(d)
  ps = (f32[6,2], s32[], s32[]) custom-call(e), custom_call_target="PadToStatic"
  rows = s32[] get-tuple-element(ps), index=1
  cols = s32[] get-tuple-element(ps), index=2
  sum = s32[] add(rows, cols)
  fr = f32[] convert(sum)
  ROOT t = (f32[2], f32[], f32[<=6,2]) tuple(r, fr, e)
})";
  const hlo::Literal x = hlo::Literal::FromVector<float>({6, 2}, Iota(12));
  // 3 valid rows of 2: column sums 1+3+5, 2+4+6; sizes 3 + 2; the rows past 3 read 0.
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(3)},
               {{9, 12}, {5}, {-1, -2, -3, -4, -5, -6, 0, 0, 0, 0, 0, 0}});
  ExpectValues(text, {x, hlo::Literal::Scalar<int32_t>(9)},  // clamped to 6
               {{36, 42}, {8}, {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12}});
  DynamicPadder padder;
  testing::ExpectRefused(padder, R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  ROOT d = f32[<=6] custom-call(x), custom_call_target="SliceToDynamic"
})", "SliceToDynamic takes (data, one s32[] size per dimension of data)");
}

TEST(DynamicPadderTest, WhatThePadderDoesNotHandleIsALocatedError) {
  DynamicPadder padder;
  testing::ExpectRefused(padder, R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT s = f32[<=6] slice(d), slice={[1:7]}
})", "a slice of dynamic dimension 0");
  testing::ExpectRefused(padder, R"(HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  n = s32[] parameter(1)
  d = f32[4,<=8] set-dimension-size(x, n), dimensions={1}
  ROOT r = f32[<=32] reshape(d)
})", "the valid elements are not a prefix");
  testing::ExpectRefused(padder, R"(HloModule m
ENTRY e {
  x = f32[1,4,4,1] parameter(0)
  k = f32[1,1,1,1] parameter(1)
  n = s32[] parameter(2)
  d = f32[1,<=4,4,1] set-dimension-size(x, n), dimensions={1}
  ROOT c = f32[1,<=4,4,1] convolution(d, k), window={size=1x1}, dim_labels=b01f_01io->b01f
})", "operand 0 (%d) has a dynamic size in dimension 1");
  testing::ExpectRefused(padder, R"(HloModule m
body {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[<=8] set-dimension-size(x, n), dimensions={0}
}
ENTRY e {
  p = f32[8] parameter(0)
  k = s32[] parameter(1)
  ROOT c = f32[<=8] call(p, k), to_apply=body
})", "a dynamic size inside computation 'body'");
}

TEST(DynamicPadderTest, TheEvaluatorRefusesASizeBelowTheBoundItWasNotPaddedFor) {
  auto m = testing::Parse(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] constant(5)
  ROOT d = f32[<=8] set-dimension-size(x, n), dimensions={0}
})");
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto out = ev.Evaluate(*m, {hlo::Literal::FromVector<float>({8}, Iota(8))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("dynamic padder"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
