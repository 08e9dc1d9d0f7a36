// Module-level known-answer tests: each expected value is derived by hand beside its assertion.
#include "hlo/eval/evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;
using testing::EvalHloStatus;
using testing::Values;

TEST(ConvolutionTest, NhwcStride2) {
  // x = 1..16 as [1,4,4,1], kernel 2x2 of ones, stride 2: each output sums one 2x2 block:
  // 1+2+5+6=14, 3+4+7+8=22, 9+10+13+14=46, 11+12+15+16=54.
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,1] iota(), iota_dimension=2
  y = f32[1,4,4,1] iota(), iota_dimension=1
  four = f32[] constant(4)
  one = f32[] constant(1)
  b4 = f32[1,4,4,1] broadcast(four), dimensions={}
  b1 = f32[1,4,4,1] broadcast(one), dimensions={}
  y4 = f32[1,4,4,1] multiply(y, b4)
  s = f32[1,4,4,1] add(y4, x)
  in = f32[1,4,4,1] add(s, b1)
  k = f32[2,2,1,1] broadcast(one), dimensions={}
  ROOT c = f32[1,2,2,1] convolution(in, k), window={size=2x2 stride=2x2}, dim_labels=b01f_01io->b01f
})");
  EXPECT_EQ(Values(r), (std::vector<double>{14, 22, 46, 54}));
}

TEST(ConvolutionTest, NchwPadding) {
  // x = 1..9 as [1,1,3,3] (NCHW), 3x3 kernel of ones, pad 1: each output sums its 3x3
  // neighbourhood. (0,0): 1+2+4+5=12; (0,1): 1+2+3+4+5+6=21; (1,1): 45; (2,2): 5+6+8+9=28.
  Literal x = Literal::FromVector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[1,1,3,3] parameter(0)
  one = f32[] constant(1)
  k = f32[1,1,3,3] broadcast(one), dimensions={}
  ROOT c = f32[1,1,3,3] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
                      {x});
  EXPECT_EQ(Values(r), (std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
}

TEST(ConvolutionTest, DilationsAndReversal) {
  // 1-D, x = [1,2,3,4,5], k = [1,10] ([1,5,1] b0f, [2,1,1] 0io).
  //  rhs_dilate=2: out[i] = x[i] + 10 x[i+2]       -> [31, 42, 53]
  //  lhs_dilate=2: x' = [1,0,2,0,3,0,4,0,5]; out[i] = x'[i] + 10 x'[i+1] -> [1,20,2,30,3,40,4,50]
  //  rhs_reversal: k' = [10,1]; out[i] = 10 x[i] + x[i+1] -> [12,23,34,45]
  Literal x = Literal::FromVector<float>({1, 5, 1}, {1, 2, 3, 4, 5});
  Literal k = Literal::FromVector<float>({2, 1, 1}, {1, 10});
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  a = f32[1,3,1] convolution(x, k), window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f
  b = f32[1,8,1] convolution(x, k), window={size=2 lhs_dilate=2}, dim_labels=b0f_0io->b0f
  c = f32[1,4,1] convolution(x, k), window={size=2 rhs_reversal=1}, dim_labels=b0f_0io->b0f
  ROOT t = (f32[1,3,1], f32[1,8,1], f32[1,4,1]) tuple(a, b, c)
})",
                      {x, k});
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{31, 42, 53}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{1, 20, 2, 30, 3, 40, 4, 50}));
  EXPECT_EQ(Values(r.element(2)), (std::vector<double>{12, 23, 34, 45}));
}

TEST(ConvolutionTest, FeatureAndBatchGroups) {
  // Depthwise: x features [2, 3], kernel [1,1,1,2] = [10, 100], feature_group_count=2: output
  // feature o uses input feature o: [2*10, 3*100] = [20, 300]. batch_group_count=2: x batch [2, 3]
  // (1 feature), kernel O=2 [10, 100]: output feature o reads batch group o: [[2*10, 3*100]] = [20,
  // 300] with output batch 1.
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[1,1,1,2] constant({{{{2, 3}}}})
  k = f32[1,1,1,2] constant({{{{10, 100}}}})
  dw = f32[1,1,1,2] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  xb = f32[2,1,1,1] constant({{{{2}}}, {{{3}}}})
  bg = f32[1,1,1,2] convolution(xb, k), window={size=1x1}, dim_labels=b01f_01io->b01f, batch_group_count=2
  ROOT t = (f32[1,1,1,2], f32[1,1,1,2]) tuple(dw, bg)
})");
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{20, 300}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{20, 300}));
}

TEST(DotTest, BatchDims) {
  // lhs [2,1,2] = [[1,2]],[[3,4]]; rhs [2,2,1] = [[5],[6]],[[7],[8]]: batch 0: 1*5+2*6 = 17,
  // batch 1: 3*7+4*8 = 53.
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,1,2] constant({{{1, 2}}, {{3, 4}}})
  b = f32[2,2,1] constant({{{5}, {6}}, {{7}, {8}}})
  ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  EXPECT_EQ(Values(r), (std::vector<double>{17, 53}));
}

TEST(DotTest, Bf16AccumulatesInF32) {
  // 256 x (1 * 1) + 1 * 1 in bf16 steps would stall at 256 (256 + 1 rounds back to 256 in bf16);
  // accumulated in f32 the sum is 257, then rounded once to bf16 -> 256 (tie to even). Use 258
  // terms: f32 sum 258 -> exactly representable in bf16; a bf16 running sum would give 256.
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  one = bf16[] constant(1)
  a = bf16[258] broadcast(one), dimensions={}
  ROOT d = bf16[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  EXPECT_EQ(r.GetAsDouble(0), 258.0);
}

TEST(ReduceWindowTest, PaddingIsSkipped) {
  // x = [1,2,3,4], window 2 stride 2 pad 1_1, add: windows (pad,1) (2,3) (4,pad) -> [1, 5, 4].
  Literal r = EvalHlo(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] constant({1, 2, 3, 4})
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 stride=2 pad=1_1}, to_apply=add
})");
  EXPECT_EQ(Values(r), (std::vector<double>{1, 5, 4}));
}

TEST(SelectAndScatterTest, MaxPoolGradient) {
  // operand [1,5,3,2], window 2 stride 2, select GE: maxima at index 1 (5) and 2 (3); source
  // [10,20] scattered there with add onto init 0 -> [0,10,20,0].
  Literal r = EvalHlo(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] constant({1, 5, 3, 2})
  s = f32[2] constant({10, 20})
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add
})");
  EXPECT_EQ(Values(r), (std::vector<double>{0, 10, 20, 0}));
}

TEST(GatherScatterTest, SemanticsDocRows) {
  // Gather rows [0, 2] of [[1,2,3],[4,5,6],[7,8,9]] (the operation-semantics "rows" example); index
  // 5 is clamped to 2 (3 - slice size 1). Scatter-add [[1,2,3],[4,5,6]] into rows 0 and 0 of zeros:
  // row 0 = [5,7,9] (duplicates accumulate), other rows 0.
  Literal r = EvalHlo(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[3,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
  i = s32[2,1] constant({{0}, {5}})
  g = s32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  z = s32[3,3] constant({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}})
  j = s32[2,1] constant({{0}, {0}})
  u = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  s = s32[3,3] scatter(z, j, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (s32[2,3], s32[3,3]) tuple(g, s)
})");
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{5, 7, 9, 0, 0, 0, 0, 0, 0}));
}

TEST(DynamicSliceTest, StartsAreClamped) {
  // x = [0..4], start 4 size 2 -> clamped to 3 -> [3,4]; start -2 -> 0 -> [0,1].
  // dynamic-update-slice of [9,9] at start 10 -> clamped to 3 -> [0,1,2,9,9].
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = s32[5] iota(), iota_dimension=0
  four = s32[] constant(4)
  neg = s32[] constant(-2)
  ten = s32[] constant(10)
  a = s32[2] dynamic-slice(x, four), dynamic_slice_sizes={2}
  b = s32[2] dynamic-slice(x, neg), dynamic_slice_sizes={2}
  u = s32[2] constant({9, 9})
  c = s32[5] dynamic-update-slice(x, u, ten)
  ROOT t = (s32[2], s32[2], s32[5]) tuple(a, b, c)
})");
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{3, 4}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{0, 1}));
  EXPECT_EQ(Values(r.element(2)), (std::vector<double>{0, 1, 2, 9, 9}));
}

TEST(SortTest, MultiOperandStable) {
  // keys [3,1,2,1] with values [30,10,20,11], ascending, stable: keys [1,1,2,3], values
  // [10,11,20,30].
  Literal r = EvalHlo(R"(
HloModule m
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[4] constant({3, 1, 2, 1})
  v = s32[4] constant({30, 10, 20, 11})
  ROOT s = (s32[4], s32[4]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt
})");
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{1, 1, 2, 3}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{10, 11, 20, 30}));
}

TEST(ControlFlowTest, WhileCounter) {
  // (i, x) = (0, 1); while i < 5: (i + 1, 2x) -> (5, 32).
  Literal r = EvalHlo(R"(
HloModule m
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  two = f32[] constant(2)
  i2 = s32[] add(i, one)
  x2 = f32[] multiply(x, two)
  ROOT t = (s32[], f32[]) tuple(i2, x2)
}
ENTRY e {
  z = s32[] constant(0)
  o = f32[] constant(1)
  init = (s32[], f32[]) tuple(z, o)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
})");
  EXPECT_EQ(r.element(0).GetAsInt64(0), 5);
  EXPECT_EQ(r.element(1).GetAsDouble(0), 32.0);
}

TEST(ControlFlowTest, WhileIterationLimit) {
  const char* text = R"(
HloModule m
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  ROOT q = s32[] copy(p)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
})";
  EvaluatorOptions o;
  o.max_while_iterations = 100;
  Status st = EvalHloStatus(text, {}, o);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("'w'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("more than 100 trips (EvaluatorOptions::max_while_iterations)"),
            std::string::npos)
      << st.message();
}

// A loop whose count is known at compile time past the bound is refused before its first trip,
// with the words the compiler uses (hlo::TooManyTripsReason): its body would fail at the first
// trip (an unimplemented custom-call), so running it would give another error. At the bound it
// runs.
TEST(ControlFlowTest, KnownTripCountPastTheBoundIsRefusedAtOnce) {
  auto loop_of = [](int64_t trips, const std::string& step) {
    return std::string(R"(
HloModule m
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant()") + std::to_string(trips) + R"()
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  )" + step + R"(
  ROOT t = (s32[], f32[]) tuple(i1, y)
}
ENTRY e {
  z = s32[] constant(0)
  o = f32[] constant(1)
  init = (s32[], f32[]) tuple(z, o)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
})";
  };
  EvaluatorOptions o;
  o.max_while_iterations = 100;
  const std::string fails = "y = f32[] custom-call(x), custom_call_target=\"no_such_target\"";
  Status st = EvalHloStatus(loop_of(101, fails), {}, o);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.message();
  EXPECT_NE(st.message().find(hlo::TooManyTripsReason(100)), std::string::npos) << st.message();
  // The default bound is tpusim's one bound on a while.
  st = EvalHloStatus(loop_of(hlo::kMaxWhileTrips + 1, fails));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.message();
  EXPECT_NE(st.message().find(hlo::TooManyTripsReason(hlo::kMaxWhileTrips)), std::string::npos)
      << st.message();
  Literal r = EvalHlo(loop_of(100, "y = f32[] add(x, x)"), {}, o);
  EXPECT_EQ(r.element(0).GetAsInt64(0), 100);
  EXPECT_EQ(r.element(1).GetAsDouble(0), 1267650600228229401496703205376.0);  // 2^100
}

TEST(ControlFlowTest, ConditionalPredAndIndex) {
  // pred true -> true_computation (negate 3 = -3); index 7 out of range -> last branch (x * 10 =
  // 30).
  Literal r = EvalHlo(R"(
HloModule m
neg {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
id {
  p = f32[] parameter(0)
  ROOT n = f32[] copy(p)
}
ten {
  p = f32[] parameter(0)
  t = f32[] constant(10)
  ROOT n = f32[] multiply(p, t)
}
ENTRY e {
  x = f32[] constant(3)
  t = pred[] constant(true)
  a = f32[] conditional(t, x, x), true_computation=neg, false_computation=id
  i = s32[] constant(7)
  b = f32[] conditional(i, x, x, x), branch_computations={neg, id, ten}
  ROOT r = (f32[], f32[]) tuple(a, b)
})");
  EXPECT_EQ(r.element(0).GetAsDouble(0), -3.0);
  EXPECT_EQ(r.element(1).GetAsDouble(0), 30.0);
}

TEST(CustomCallTest, Table) {
  // Gelu(1) = Phi(1) = 0.841344746; tanh approximation 0.5(1 + tanh(sqrt(2/pi)(1 + 0.044715))) =
  // 0.841191990; softmax([1,2,3]) = [0.0900306, 0.2447285, 0.6652410]; RmsNorm over dim 0 of
  // [[3],[4]]: rsqrt((9 + 16)/2) = 0.2828427 -> [0.8485281, 1.1313708] times w = [1, 2] ->
  // [0.8485281, 2.2627417].
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  one = f32[1] constant({1})
  g = f32[1] custom-call(one), custom_call_target="AwsNeuronGelu"
  gt = f32[1] custom-call(one), custom_call_target="AwsNeuronGeluApprxTanh"
  x = f32[1,3] constant({{1, 2, 3}})
  s = f32[1,3] custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  h = f32[2,1] constant({{3}, {4}})
  w = f32[2] constant({1, 2})
  eps = f32[] constant(0)
  n = f32[2,1] custom-call(h, w, eps), custom_call_target="AwsNeuronRmsNorm", backend_config="0"
  i = f32[2,1] custom-call(h), custom_call_target="AwsNeuronTransferWithStaticRing"
  ROOT t = (f32[1], f32[1], f32[1,3], f32[2,1], f32[2,1]) tuple(g, gt, s, n, i)
})");
  ASSERT_TRUE(r.IsTuple());
  EXPECT_NEAR(r.element(0).GetAsDouble(0), 0.8413447460685429, 1e-6);
  EXPECT_NEAR(r.element(1).GetAsDouble(0), 0.8411919906082768, 1e-6);
  EXPECT_NEAR(r.element(2).GetAsDouble(0), 0.09003057, 1e-6);
  EXPECT_NEAR(r.element(2).GetAsDouble(2), 0.66524096, 1e-6);
  EXPECT_NEAR(r.element(3).GetAsDouble(0), 0.8485281, 1e-6);
  EXPECT_NEAR(r.element(3).GetAsDouble(1), 2.2627417, 1e-6);
  EXPECT_EQ(Values(r.element(4)), (std::vector<double>{3, 4}));
}

TEST(CustomCallTest, UnknownTargetNamesTargetAndInstruction) {
  Status st = EvalHloStatus(R"(
HloModule m
ENTRY e {
  x = f32[2] constant({1, 2})
  ROOT y = f32[2] custom-call(x), custom_call_target="MyKernel"
})");
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("MyKernel"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'y'"), std::string::npos) << st.message();
}

TEST(EvaluatorTest, ValueOverLimitNamesInstruction) {
  EvaluatorOptions o;
  o.max_bytes = 1000;
  Status st = EvalHloStatus(R"(
HloModule m
ENTRY e {
  z = f32[] constant(0)
  ROOT big = f32[1000] broadcast(z), dimensions={}
})",
                            {}, o);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("'big'"), std::string::npos) << st.message();
}

TEST(EvaluatorTest, ElidedConstantIsDeterministic) {
  const char* text = R"(
HloModule m
ENTRY e {
  ROOT c = f32[16] constant({...})
})";
  Literal a = EvalHlo(text), b = EvalHlo(text);
  EXPECT_TRUE(a.BitwiseEqual(b));
  EXPECT_NE(a.GetAsDouble(0), a.GetAsDouble(1));
}

TEST(EvaluatorTest, BatchNormTraining) {
  // Feature 0 holds [1, 3] -> mean 2, biased var 1; y = (x - 2) / sqrt(1 + 0) = [-1, 1].
  Literal r = EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,1] constant({{1}, {3}})
  s = f32[1] constant({1})
  o = f32[1] constant({0})
  ROOT b = (f32[2,1], f32[1], f32[1]) batch-norm-training(x, s, o), epsilon=0, feature_index=1
})");
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{-1, 1}));
  EXPECT_EQ(Values(r.element(1)), (std::vector<double>{2}));
  EXPECT_EQ(Values(r.element(2)), (std::vector<double>{1}));
}

TEST(EvaluatorTest, ReduceArgmaxGenericReducer) {
  // Multi-operand reduce (value, index) with a max-and-argmax reducer: max of [3, 9, 2] is 9 at 1.
  Literal r = EvalHlo(R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  ge = pred[] compare(av, bv), direction=GE
  v = f32[] select(ge, av, bv)
  i = s32[] select(ge, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[3] constant({3, 9, 2})
  i = s32[3] iota(), iota_dimension=0
  mv = f32[] constant(-inf)
  mi = s32[] constant(-1)
  ROOT r = (f32[], s32[]) reduce(x, i, mv, mi), dimensions={0}, to_apply=argmax
})");
  EXPECT_EQ(r.element(0).GetAsDouble(0), 9.0);
  EXPECT_EQ(r.element(1).GetAsInt64(0), 1);
}

}  // namespace
}  // namespace tpusim::hlo

namespace tpusim::hlo {
namespace {

// EstimateCheckBytes: per device the parameters plus twice the largest value, from shapes only;
// saturating for shapes whose sizes overflow.
TEST(EstimateCheckBytesTest, ParametersPlusTwiceTheLargestValuePerDevice) {
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[16,8] parameter(0)
  b = f32[8] parameter(1)
  big = f32[16,8,4] broadcast(a), dimensions={0,1}
  ROOT r = f32[16,8] reduce(big, c), dimensions={2}, to_apply=add
  c = f32[] constant(0)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const int64_t params = 16 * 8 * 4 + 8 * 4, largest = 16 * 8 * 4 * 4;
  EXPECT_EQ(EstimateCheckBytes(**module, 1), params + 2 * largest);
  EXPECT_EQ(EstimateCheckBytes(**module, 3), 3 * (params + 2 * largest));
  EXPECT_EQ(EstimateCheckBytes(**module, int64_t{1} << 62), std::numeric_limits<int64_t>::max());
}

// rng-bit-generator: rng_default is tpusim's stream; rng_three_fry and rng_philox are XLA's
// generators (values pinned in rng_xla_test.cc), each its own stream.
TEST(EvaluatorRngTest, EachAlgorithmIsItsOwnStream) {
  std::vector<std::vector<double>> streams;
  for (const char* algorithm : {"rng_default", "rng_three_fry", "rng_philox"}) {
    const std::string text = std::string("HloModule m\nENTRY e {\n") +
                             "  s = u64[2] constant({1, 2})\n" +
                             "  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=" +
                             algorithm + "\n}\n";
    const Literal r = testing::EvalHlo(text);
    ASSERT_TRUE(r.shape().IsTuple()) << algorithm;
    streams.push_back(testing::Values(r.element(1)));
  }
  EXPECT_NE(streams[0], streams[1]);
  EXPECT_NE(streams[0], streams[2]);
  EXPECT_NE(streams[1], streams[2]);
}

// A bitcast to another element type of the same width reinterprets the bits (XLA's GPU
// bitcast_add test: f16[20] -> s16[4,5]), as bitcast-convert does; the count must still match.
TEST(BitcastTest, SameWidthElementTypeReinterpretsTheBits) {
  const char* kText = R"(HloModule m
ENTRY e {
  x = f16[4] parameter(0)
  b = s16[2,2] bitcast(x)
  c = s16[2,2] bitcast-convert(f16[2,2] reshape(x))
  ROOT t = (s16[2,2], s16[2,2]) tuple(b, c)
}
)";
  auto x = Literal::Create(Shape(PrimitiveType::kF16, {4}));
  ASSERT_TRUE(x.ok());
  const double v[] = {1.0, -2.0, 0.5, 65504.0};
  for (int64_t i = 0; i < 4; ++i) x->SetFromDouble(i, v[i]);
  const Literal r = EvalHlo(kText, {*x});
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(r.element(0).element_type(), PrimitiveType::kS16);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.element(0).GetAsDouble(i), r.element(1).GetAsDouble(i)) << i;
  }
  EXPECT_EQ(r.element(0).GetAsDouble(0), 0x3C00);  // f16 1.0
  // Another width is still refused.
  EXPECT_FALSE(EvalHloStatus(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT b = s16[8] bitcast(x)
}
)", {Literal::FromVector<float>({4}, {1, 2, 3, 4})}).ok());
}

}  // namespace
}  // namespace tpusim::hlo
