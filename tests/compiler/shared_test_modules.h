// HLO modules that two test files each use — a pass test that checks the rewrite (structure,
// the evaluator's bits before and after) and a device test that runs the compiled module
// against the reference — kept once, here.
#pragma once

namespace tpusim::compiler::testing {

// pt_gpt2_1layer_tp1's layer norm: batch-norm-training over 768 hidden units of 4 tokens (feature
// dimension 1), feeding a DEFAULT-precision dot, as batch-norm-training.177 feeds dot.187.
inline constexpr char kLayerNormDot[] = R"(
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
inline constexpr char kInference[] = R"(
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
inline constexpr char kCustomCalls[] = R"(
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
inline constexpr char kNarrowCustomCalls[] = R"(
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
inline constexpr char kCustomCallInLoop[] = R"(
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

// A pred conditional on data (is sum(x) > 0?) with a tuple result.
inline constexpr char kPredConditional[] = R"(
HloModule cond_pred
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
on_true {
  t = (f32[4,8], f32[8]) parameter(0)
  x = f32[4,8] get-tuple-element(t), index=0
  v = f32[8] get-tuple-element(t), index=1
  n = f32[4,8] negate(x)
  ROOT r = (f32[4,8], f32[8]) tuple(n, v)
}
on_false {
  x = f32[4,8] parameter(0)
  e = f32[4,8] exponential(x)
  z = f32[] constant(0)
  s = f32[8] reduce(x, z), dimensions={0}, to_apply=add
  ROOT r = (f32[4,8], f32[8]) tuple(e, s)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  v = f32[8] parameter(1)
  z = f32[] constant(0)
  total = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  p = pred[] compare(total, z), direction=GT
  tv = (f32[4,8], f32[8]) tuple(x, v)
  ROOT c = (f32[4,8], f32[8]) conditional(p, tv, x), true_computation=on_true, false_computation=on_false
}
)";

}  // namespace tpusim::compiler::testing
