// Regression tests for two failed `tpusim run` checks on real modules (xla_ssd_mobilenet_tf.hlo,
// pt_llama2_tp4_pp2_collectives.hlo). Each compiles a small hand-written module, runs it on the ISA
// interpreter and compares the outputs BIT FOR BIT with the CPU evaluator set up as `tpusim run`
// sets it up (arguments from seed 42, EvaluatorOptions::seed = 42, TPU DEFAULT precision):
//  * elided constants (`constant({...})`, the weights of the SSD dump) must get the same values on
//    the device and in the reference whatever the run's seed — the compiler filled them with seed
//    0 and the evaluator with the run's seed (42), so every weight differed;
//  * sums of bf16 values (reduce, all-reduce) must be accumulated in f32 and rounded once on both
//    sides — the evaluator rounded to bf16 after every addition, so a sum of 256000 squares
//    stopped at 256 while the device gave ~85000.
#include <gtest/gtest.h>

#include <cstring>

#include "compile_test_util.h"
#include "compiler/lower/constant_data.h"

namespace tpusim::compiler {
namespace {

// Every element's bits equal (NaNs with equal bits too).
void ExpectBitwiseEqual(const hlo::Literal& got, const hlo::Literal& want) {
  ASSERT_EQ(got.element_count(), want.element_count());
  ASSERT_EQ(got.size_bytes(), want.size_bytes());
  int64_t differ = 0, first = -1;
  const int64_t eb = want.element_count() > 0 ? want.size_bytes() / want.element_count() : 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (std::memcmp(got.raw() + i * eb, want.raw() + i * eb, static_cast<size_t>(eb)) != 0) {
      if (differ++ == 0) first = i;
    }
  }
  EXPECT_EQ(differ, 0) << "first at element " << first << ": simulated "
                       << (first >= 0 ? got.GetAsDouble(first) : 0.0) << ", evaluator "
                       << (first >= 0 ? want.GetAsDouble(first) : 0.0);
}

// The reference `tpusim run` computes for device 0: seed-42 arguments, EvaluatorOptions::seed = 42.
struct Reference {
  std::vector<std::vector<hlo::Literal>> args;  // per device
  std::vector<hlo::Literal> outputs;            // per device
};

Reference RunReference(const hlo::HloModule& module, int64_t devices, uint64_t seed = 42,
                       int64_t mxu_rows = 0) {
  Reference ref;
  for (int64_t d = 0; d < devices; ++d) {
    auto a = hlo::Evaluator::MakeRandomArguments(module, seed, d);
    EXPECT_TRUE(a.ok()) << a.status().message();
    ref.args.push_back(a.ok() ? std::move(a).value() : std::vector<hlo::Literal>{});
  }
  hlo::EvaluatorOptions eo;
  eo.seed = seed;
  eo.tpu_default_precision = true;
  eo.mxu_rows = mxu_rows;
  hlo::Evaluator ev(eo);
  auto out = ev.EvaluateReplicated(module, devices, 1, ref.args);
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (out.ok()) ref.outputs = std::move(out).value();
  return ref;
}

TEST(ChecksNumericsTest, ElidedWeightsAreTheSameForEverySeed) {
  // A 1x1 convolution with elided weights: lowered to im2col + dot, weights are device data.
  auto module = testing::Parse(R"(
HloModule m
ENTRY e {
  x = bf16[1,6,6,16] parameter(0)
  w = bf16[1,1,16,8] constant({...})
  ROOT c = bf16[1,6,6,8] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
})");
  ASSERT_NE(module, nullptr);
  for (uint64_t seed : {0u, 42u, 7u}) {
    SCOPED_TRACE(seed);
    Reference ref = RunReference(*module, 1, seed, testing::Config("tpu-v4").core.mxu.rows);
    ASSERT_EQ(ref.outputs.size(), 1u);
    auto run = testing::CompileAndRun(*module, testing::Config("tpu-v4"), ref.args);
    ASSERT_TRUE(run.ok()) << run.status().message();
    ASSERT_EQ(run->outputs.size(), 1u);
    ExpectBitwiseEqual(run->outputs[0], ref.outputs[0]);
  }
}

TEST(ChecksNumericsTest, DeviceConstantBytesAreTheEvaluatorsElidedConstant) {
  // The compiler's copy of the generator (constant_data.cc) and the evaluator's must agree.
  auto module = testing::Parse(R"(
HloModule m
ENTRY e {
  ROOT w = f32[3,5] constant({...})
})");
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* w = module->entry_computation()->root_instruction();
  auto bytes = ConstantBytes(*w, isa::DType::kF32);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto lit = hlo::Literal::Create(w->shape());
  ASSERT_TRUE(lit.ok());
  hlo::FillRandom(*lit, hlo::kElidedConstantSeed, "w");
  ASSERT_EQ(static_cast<int64_t>(bytes->size()), lit->size_bytes());
  EXPECT_EQ(std::memcmp(bytes->data(), lit->raw(), bytes->size()), 0);
}

TEST(ChecksNumericsTest, Bf16SumOfManySquaresAccumulatesInF32) {
  // As the global-norm clip of pt_llama2_tp4_pp2_collectives.hlo: sum of g*g over bf16[8000,32].
  auto module = testing::Parse(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  g = bf16[8000,32] parameter(0)
  sq = bf16[8000,32] multiply(g, g)
  zero = bf16[] constant(0)
  ROOT n = bf16[] reduce(sq, zero), dimensions={0,1}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  Reference ref = RunReference(*module, 1);
  ASSERT_EQ(ref.outputs.size(), 1u);
  // 256000 squares of U[-1, 1) sum to about 85333; a bf16 accumulator stalls at 256.
  EXPECT_GT(ref.outputs[0].GetAsDouble(0), 80000.0);
  auto run = testing::CompileAndRun(*module, testing::Config("tpu-v4"), ref.args);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->outputs.size(), 1u);
  ExpectBitwiseEqual(run->outputs[0], ref.outputs[0]);
}

TEST(ChecksNumericsTest, Bf16RowSumsAccumulateInF32) {
  // Per-row sums (reduced dimension minor) and per-column sums (reduced dimension leading).
  auto module = testing::Parse(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[64,3000] parameter(0)
  zero = bf16[] constant(0)
  rows = bf16[64] reduce(x, zero), dimensions={1}, to_apply=add
  cols = bf16[3000] reduce(x, zero), dimensions={0}, to_apply=add
  ROOT t = (bf16[64], bf16[3000]) tuple(rows, cols)
})");
  ASSERT_NE(module, nullptr);
  Reference ref = RunReference(*module, 1);
  ASSERT_EQ(ref.outputs.size(), 1u);
  auto run = testing::CompileAndRun(*module, testing::Config("tpu-v4"), ref.args);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->outputs.size(), 2u);
  ExpectBitwiseEqual(run->outputs[0], ref.outputs[0].element(0));
  ExpectBitwiseEqual(run->outputs[1], ref.outputs[0].element(1));
}

TEST(ChecksNumericsTest, Bf16AllReduceAndReduceScatterRoundOnce) {
  // The tuple-form collectives of the llama2 dump, over four replicas.
  auto module = testing::Parse(R"(
HloModule m, replica_count=4
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  g = bf16[64,32] parameter(0)
  h = bf16[2048] parameter(1)
  ar = bf16[64,32] all-reduce(g), replica_groups={{0,1,2,3}}, to_apply=add
  rs = bf16[512] reduce-scatter(h), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add
  ROOT t = (bf16[64,32], bf16[512]) tuple(ar, rs)
})");
  ASSERT_NE(module, nullptr);
  Reference ref = RunReference(*module, 4);
  ASSERT_EQ(ref.outputs.size(), 4u);
  auto run = testing::CompileAndRun(*module, testing::Config("tiny-4"), ref.args);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->outputs.size(), 2u);
  ExpectBitwiseEqual(run->outputs[0], ref.outputs[0].element(0));
  ExpectBitwiseEqual(run->outputs[1], ref.outputs[0].element(1));
}

// Dots and convolutions whose K spans several MXU weight tiles: the reference sums in the MXU's
// order (EvaluatorOptions::mxu_rows), so the bf16 results agree bit for bit. With Eigen's order
// (one 256-deep k block) xla_ssd_mobilenet_tf.hlo's Conv2D.81 (1x1, K = 256 on 128-row arrays)
// rounded 4 of 184832 outputs to the neighbouring bf16 value; the flips grew layer by layer and
// the exp of the box decoder made them a 2.6e20 error.
TEST(ChecksNumericsTest, MultiTileDotsAndConvolutionsMatchTheMxuBitForBit) {
  auto module = testing::Parse(R"(
HloModule m
ENTRY e {
  x = bf16[1,10,10,256] parameter(0)
  w1 = bf16[1,1,256,512] constant({...})
  c1 = bf16[1,10,10,512] convolution(x, w1), window={size=1x1}, dim_labels=b01f_01io->b01f
  w2 = bf16[3,3,512,24] constant({...})
  c2 = bf16[1,5,5,24] convolution(c1, w2), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  a = f32[40,1000] parameter(1)
  b = f32[1000,200] parameter(2)
  d = f32[40,200] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (bf16[1,10,10,512], bf16[1,5,5,24], f32[40,200]) tuple(c1, c2, d)
})");
  ASSERT_NE(module, nullptr);
  const config::ChipConfig config = testing::Config("tpu-v4");
  Reference ref = RunReference(*module, 1, 42, config.core.mxu.rows);
  ASSERT_EQ(ref.outputs.size(), 1u);
  auto run = testing::CompileAndRun(*module, config, ref.args);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->outputs.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ExpectBitwiseEqual(run->outputs[static_cast<size_t>(i)], ref.outputs[0].element(i));
  }
}

}  // namespace
}  // namespace tpusim::compiler
