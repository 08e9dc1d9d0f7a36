// Regression tests for the failed `tpusim run` check of pt_gpt2_1layer_tp1.hlo (987460 elements,
// max abs error 0.056 at tpu-v4). Its layer norms are batch-norm-training ops, which the compiler
// expands into f32 reduce / divide / subtract / multiply / rsqrt ops
// (compiler/passes/batch_norm_expander.cc) while the CPU evaluator computed them in f64 and rounded
// once. The two differ by an f32 ulp here and there (5.96e-07 at add.75), harmless in itself, but
// the next DEFAULT-precision dot rounds its f32 operands to bf16 and an ulp near a bf16 rounding
// boundary flips a bf16 value: dot.187 was off by 0.000977, and GELU, dot.192 (K = 3072) and the
// residual adds amplified that to 0.4. The AwsNeuron GELU custom calls had the same f64-vs-f32
// mismatch (4.77e-07 at custom-call.191). The evaluator's TPU semantics now compute these ops as
// their expansion does; these tests compare the device's values and the evaluator's BIT FOR BIT,
// (the evaluator against itself on the expanded module is in batch_norm_expander_test.cc and
// custom_call_expander_test.cc).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

// Elements whose bits differ (NaNs with equal bits count as equal); reports the first one.
int64_t CountBitDifferences(const hlo::Literal& got, const hlo::Literal& want,
                            const std::string& what) {
  EXPECT_EQ(got.element_count(), want.element_count()) << what;
  EXPECT_EQ(got.size_bytes(), want.size_bytes()) << what;
  if (got.size_bytes() != want.size_bytes() || want.element_count() == 0) return -1;
  const int64_t eb = want.size_bytes() / want.element_count();
  int64_t differ = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (std::memcmp(got.raw() + i * eb, want.raw() + i * eb, static_cast<size_t>(eb)) != 0) {
      if (differ++ == 0) {
        ADD_FAILURE() << what << ": first difference at element " << i << ": got "
                      << got.GetAsDouble(i) << ", want " << want.GetAsDouble(i);
      }
    }
  }
  return differ;
}

// The reference `tpusim run` checks against: seed-42 arguments, TPU DEFAULT precision, dots in the
// MXU's K-tile order.
hlo::EvaluatorOptions TpuOptions(int64_t mxu_rows) {
  hlo::EvaluatorOptions eo;
  eo.seed = 42;
  eo.tpu_default_precision = true;
  eo.mxu_rows = mxu_rows;
  return eo;
}

// Compiles `text` for tpu-v4, runs it on the ISA interpreter and expects every output leaf to equal
// the evaluator's bit for bit.
void ExpectDeviceMatchesReference(const std::string& text) {
  auto module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  const config::ChipConfig config = testing::Config("tpu-v4");
  auto args = hlo::Evaluator::MakeRandomArguments(*module, 42);
  ASSERT_TRUE(args.ok()) << args.status().message();
  hlo::Evaluator ev(TpuOptions(config.core.mxu.rows));
  auto want = ev.Evaluate(*module, *args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto run = testing::CompileAndRun(*module, config, {*args});
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::vector<const hlo::Literal*> leaves = want->Leaves();
  ASSERT_EQ(leaves.size(), run->outputs.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_EQ(CountBitDifferences(run->outputs[i], *leaves[i], "output " + std::to_string(i)), 0);
  }
}

// pt_gpt2_1layer_tp1's layer norm: batch-norm-training over 768 hidden units of 4 tokens (feature
// dimension 1), feeding a DEFAULT-precision dot, as batch-norm-training.177 feeds dot.187.
constexpr char kLayerNormDot[] = R"(
HloModule m
ENTRY e {
  x = f32[768,4] parameter(0)
  scale = f32[4] parameter(1)
  offset = f32[4] parameter(2)
  w = f32[768,256] parameter(3)
  bn = (f32[768,4], f32[4], f32[4]) batch-norm-training(x, scale, offset), epsilon=1e-05, feature_index=1
  y = f32[768,4] get-tuple-element(bn), index=0
  mean = f32[4] get-tuple-element(bn), index=1
  var = f32[4] get-tuple-element(bn), index=2
  d = f32[4,256] dot(y, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[768,4], f32[4], f32[4], f32[4,256]) tuple(y, mean, var, d)
})";

// batch-norm-inference on an NHWC activation (feature dimension 3); abs() keeps the variance valid.
constexpr char kInference[] = R"(
HloModule m
ENTRY e {
  x = f32[2,6,6,16] parameter(0)
  scale = f32[16] parameter(1)
  offset = f32[16] parameter(2)
  mean = f32[16] parameter(3)
  v = f32[16] parameter(4)
  var = f32[16] abs(v)
  ROOT y = f32[2,6,6,16] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=3
})";

// The AwsNeuron composite custom calls the custom-call expander rewrites (pt_gpt2's MLP uses
// AwsNeuronGeluApprxTanh). The inputs are scaled up so tanh/erf see more than their linear range.
constexpr char kCustomCalls[] = R"(
HloModule m
ENTRY e {
  p = f32[8,300] parameter(0)
  dy = f32[8,300] parameter(1)
  w = f32[300] parameter(2)
  eps = f32[] constant(1e-06)
  k = f32[] constant(4)
  kb = f32[8,300] broadcast(k), dimensions={}
  x = f32[8,300] multiply(p, kb)
  tanh_gelu = f32[8,300] custom-call(x), custom_call_target="AwsNeuronGeluApprxTanh"
  gelu = f32[8,300] custom-call(x), custom_call_target="AwsNeuronGelu"
  gelu_bwd = f32[8,300] custom-call(x), custom_call_target="AwsNeuronGeluBackward"
  softmax = f32[8,300] custom-call(x), custom_call_target="AwsNeuronSoftmax"
  softmax_bwd = f32[8,300] custom-call(softmax, dy), custom_call_target="AwsNeuronSoftmaxBackward"
  rms = f32[8,300] custom-call(x, w, eps), custom_call_target="AwsNeuronRmsNorm"
  ROOT t = (f32[8,300], f32[8,300], f32[8,300], f32[8,300], f32[8,300], f32[8,300]) tuple(tanh_gelu, gelu, gelu_bwd, softmax, softmax_bwd, rms)
})";

// The same kernels on bf16 and f16 (BERT in bf16 calls AwsNeuronGelu on bf16[4,128,3072]): the
// expansion widens to f32 and rounds the result once; RmsNorm mixes a bf16 activation with an f32
// weight.
constexpr char kNarrowCustomCalls[] = R"(
HloModule m
ENTRY e {
  p = f32[8,300] parameter(0)
  w = f32[300] parameter(1)
  k = f32[] constant(4)
  kb = f32[8,300] broadcast(k), dimensions={}
  xf = f32[8,300] multiply(p, kb)
  x = bf16[8,300] convert(xf)
  h = f16[8,300] convert(xf)
  eps = bf16[] constant(1e-06)
  gelu = bf16[8,300] custom-call(x), custom_call_target="AwsNeuronGelu"
  tanh_gelu = f16[8,300] custom-call(h), custom_call_target="AwsNeuronGeluApprxTanh"
  softmax = bf16[8,300] custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  rms = bf16[8,300] custom-call(x, w, eps), custom_call_target="AwsNeuronRmsNorm"
  ROOT t = (bf16[8,300], f16[8,300], bf16[8,300], bf16[8,300]) tuple(gelu, tanh_gelu, softmax, rms)
})";

// A kernel call inside a while body (a scanned layer) is expanded there too.
constexpr char kCustomCallInLoop[] = R"(
HloModule m
body {
  p = (s32[], bf16[8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = bf16[8,128] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  g = bf16[8,128] custom-call(x), custom_call_target="AwsNeuronGelu"
  ROOT t = (s32[], bf16[8,128]) tuple(i1, g)
}
cond {
  p = (s32[], bf16[8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = bf16[8,128] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], bf16[8,128]) tuple(zero, x)
  w = (s32[], bf16[8,128]) while(init), condition=cond, body=body
  ROOT r = bf16[8,128] get-tuple-element(w), index=1
})";

TEST(Checks2BatchNormTest, NarrowFloatCustomCallsMatchTheReferenceBitForBit) {
  ExpectDeviceMatchesReference(kNarrowCustomCalls);
}

TEST(Checks2BatchNormTest, CustomCallInAWhileBodyMatchesTheReferenceBitForBit) {
  ExpectDeviceMatchesReference(kCustomCallInLoop);
}

TEST(Checks2BatchNormTest, LayerNormThenDotMatchesTheReferenceBitForBit) {
  ExpectDeviceMatchesReference(kLayerNormDot);
}

TEST(Checks2BatchNormTest, BatchNormInferenceMatchesTheReferenceBitForBit) {
  ExpectDeviceMatchesReference(kInference);
}

TEST(Checks2BatchNormTest, NeuronCustomCallsMatchTheReferenceBitForBit) {
  ExpectDeviceMatchesReference(kCustomCalls);
}

// Without TPU semantics batch-norm stays f64 rounded once: the statistics of a feature holding
// 1, 2, ..., 768 are exact (mean 384.5, variance (768^2 - 1) / 12); with them, the f32 fold.
TEST(Checks2BatchNormTest, WithoutTpuSemanticsStatisticsAreExact) {
  auto module = testing::Parse(R"(
HloModule m
ENTRY e {
  i = f32[768] iota(), iota_dimension=0
  one = f32[] constant(1)
  ones = f32[768] broadcast(one), dimensions={}
  v = f32[768] add(i, ones)
  x = f32[768,1] reshape(v)
  scale = f32[1] constant({1})
  offset = f32[1] constant({0})
  ROOT bn = (f32[768,1], f32[1], f32[1]) batch-norm-training(x, scale, offset), epsilon=0, feature_index=1
})");
  ASSERT_NE(module, nullptr);
  for (bool tpu : {false, true}) {
    hlo::EvaluatorOptions eo;
    eo.tpu_default_precision = tpu;
    auto out = hlo::Evaluator(eo).Evaluate(*module, {});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ(out->element(1).GetAsDouble(0), 384.5) << "tpu " << tpu;
    // f64 rounded once: within f32's spacing (0.004 here); the f32 fold of squares sums ~3.8e7.
    EXPECT_NEAR(out->element(2).GetAsDouble(0), (768.0 * 768.0 - 1.0) / 12.0, tpu ? 5.0 : 0.004)
        << "tpu " << tpu;
  }
}

}  // namespace
}  // namespace tpusim::compiler
