// layout-assignment (compiler/passes/layout_assignment.h): convolutions seed the layouts the
// measured TPU v3 profiles show (features or batch on the lanes, whichever pads less), the layouts
// spread through ops that keep, permute, broadcast or reduce their operands' dimensions, and
// parameters, the result and a post-layout-assignment dump's stated layouts stay as they are; the
// HBM plan counts the arrays' bytes in their assigned tiles.
#include "compiler/passes/layout_assignment.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/tiled_layout.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using Order = std::vector<int64_t>;

const hlo::TileRule kTpuV3Tiles{.lanes = 128, .sublanes = 8, .min_tile_bytes = 1024};

// The layout assigned to `name` in the entry of `text`; the row-major order if none.
Order LayoutOf(const std::string& text, const std::string& name,
               const hlo::TileRule& tiles = kTpuV3Tiles) {
  auto m = testing::Parse(text);
  const hlo::HloComputation& entry = *m->entry_computation();
  const TpuLayouts layouts = AssignTpuLayouts(entry, tiles);
  const hlo::HloInstruction* inst = entry.FindInstruction(name);
  EXPECT_NE(inst, nullptr) << name;
  if (inst == nullptr) return {};
  if (auto it = layouts.find(inst); it != layouts.end()) return it->second;
  Order row_major;
  for (int64_t d = inst->shape().rank() - 1; d >= 0; --d) row_major.push_back(d);
  return row_major;
}

// A PyTorch-style NCHW step: conv (NHWC inside), transposed back, bias, relu, a pooled slice, a
// broadcast mask and a reduction.
const char* kNchw = R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[64,32,26,26] parameter(0)
  w = f32[3,3,32,64] parameter(1)
  bias = f32[64] parameter(2)
  xt = f32[64,26,26,32] transpose(x), dimensions={0,2,3,1}
  conv = f32[64,24,24,64] convolution(xt, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  back = f32[64,64,24,24] transpose(conv), dimensions={0,3,1,2}
  bb = f32[64,64,24,24] broadcast(bias), dimensions={1}
  biased = f32[64,64,24,24] add(back, bb)
  zero = f32[] constant(0)
  zeros = f32[64,64,24,24] broadcast(zero), dimensions={}
  relu = f32[64,64,24,24] maximum(biased, zeros)
  pooled = f32[64,64,12,12] slice(relu), slice={[0:64], [0:64], [0:24:2], [0:24:2]}
  m = f32[64,12,12] parameter(3)
  mask = f32[64,64,12,12] broadcast(m), dimensions={0,2,3}
  dropped = f32[64,64,12,12] multiply(pooled, mask)
  init = f32[] constant(-inf)
  rowmax = f32[64,64,12] reduce(dropped, init), dimensions={3}, to_apply=max
  ROOT out = f32[64,64,12] negate(rowmax)
})";

TEST(LayoutAssignmentTest, ConvolutionActivationsPutFeaturesOnTheLanesAndBatchOnTheSublanes) {
  EXPECT_EQ(LayoutOf(kNchw, "conv"), (Order{3, 0, 2, 1}));
  // f32[64,26,26,32]: 32 features pad 4x on the lanes, 64 images 2x: the batch takes the lanes.
  EXPECT_EQ(LayoutOf(kNchw, "xt"), (Order{0, 3, 2, 1}));
}

TEST(LayoutAssignmentTest, TheLayoutSpreadsThroughTransposesAndElementwiseOps) {
  // back[n,c,h,w] = conv[n,h,w,c]: the same physical order is {1,0,3,2}, so the transpose back to
  // NCHW is a bitcast in XLA's terms, and the NCHW elementwise ops take it.
  for (const char* name : {"back", "biased", "relu", "pooled", "zeros", "bb", "mask", "dropped"}) {
    EXPECT_EQ(LayoutOf(kNchw, name), (Order{1, 0, 3, 2})) << name;
  }
  // A reduce keeps its operand's order of the dimensions it keeps: [n,c,h] with c minor, n next.
  EXPECT_EQ(LayoutOf(kNchw, "rowmax"), (Order{1, 0, 2}));
}

TEST(LayoutAssignmentTest, ParametersAndTheResultKeepTheirLayouts) {
  EXPECT_EQ(LayoutOf(kNchw, "x"), (Order{3, 2, 1, 0}));
  EXPECT_EQ(LayoutOf(kNchw, "m"), (Order{2, 1, 0}));
  EXPECT_EQ(LayoutOf(kNchw, "out"), (Order{2, 1, 0}));  // the result
}

TEST(LayoutAssignmentTest, BatchGoesOnTheLanesWhenItPadsLessThanTheFeatures) {
  const char* text = R"(HloModule m
ENTRY e {
  x = bf16[16,300,300,3] parameter(0)
  w = bf16[3,3,3,12] parameter(1)
  xs = bf16[16,300,300,3] negate(x)
  ws = bf16[3,3,3,12] negate(w)
  conv = bf16[16,298,298,12] convolution(xs, ws), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT r = bf16[16,298,298,12] negate(conv)
})";
  // bf16[16,300,300,3]: 3 features on 128 lanes pad 42.7x, 16 images 8x (the profile's own input
  // image, {0,3,2,1}).
  EXPECT_EQ(LayoutOf(text, "xs"), (Order{0, 3, 2, 1}));
  // bf16[16,298,298,12]: 12 features on the lanes (10.7x, 16 rows whole) or 16 images (8x, 12 rows
  // in 16: 10.7x) pad alike; on a tie the features take the lanes.
  EXPECT_EQ(LayoutOf(text, "conv"), (Order{3, 0, 2, 1}));
  // The kernel [3,3,3,12]: 12 output features on the lanes, 3 input features on the sublanes.
  EXPECT_EQ(LayoutOf(text, "ws"), (Order{3, 2, 1, 0}));
}

TEST(LayoutAssignmentTest, AKernelPutsTheLargerFeatureDimensionOnTheLanes) {
  const char* text = R"(HloModule m
ENTRY e {
  x = bf16[16,38,38,256] parameter(0)
  w = bf16[1,1,256,12] parameter(1)
  ws = bf16[1,1,256,12] negate(w)
  conv = bf16[16,38,38,12] convolution(x, ws), window={size=1x1}, dim_labels=b01f_01io->b01f
  ROOT r = bf16[16,38,38,12] negate(conv)
})";
  EXPECT_EQ(LayoutOf(text, "ws"), (Order{2, 3, 1, 0}));  // as the profile's bf16[1,1,256,12]
}

TEST(LayoutAssignmentTest, StatedLayoutsOfAnOptimizedDumpAreKept) {
  const char* text = R"(HloModule m
ENTRY e {
  x = bf16[16,38,38,256]{3,0,2,1} parameter(0)
  w = bf16[3,3,256,256]{3,2,1,0} parameter(1)
  xs = bf16[16,38,38,256]{3,2,1,0} negate(x)
  conv = bf16[16,36,36,256]{3,0,2,1} convolution(xs, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT r = bf16[16,36,36,256]{3,0,2,1} negate(conv)
})";
  EXPECT_EQ(LayoutOf(text, "xs"), (Order{3, 2, 1, 0}));
}

TEST(LayoutAssignmentTest, WhatNoConvolutionReachesTakesTheOrderThatPadsLeast) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[4,512,7,4] parameter(0)
  t = f32[4,512,7,4] negate(p)
  u = f32[4,512,7,4] exponential(t)
  q = f32[64,256] parameter(1)
  v = f32[64,256] negate(q)
  w = f32[4,512,7,4] negate(u)
  ROOT r = (f32[4,512,7,4], f32[64,256]) tuple(w, v)
})";
  // Row-major puts 4 on the lanes (32x); 512 on the lanes and the last 4 on the sublanes pads
  // nothing, the profile's f32[4,512,7,4]{1,3,2,0}. The exponential follows its operand.
  EXPECT_EQ(LayoutOf(text, "t"), (Order{1, 3, 2, 0}));
  EXPECT_EQ(LayoutOf(text, "u"), (Order{1, 3, 2, 0}));
  // An array row-major already pads nothing: kept.
  EXPECT_EQ(LayoutOf(text, "v"), (Order{1, 0}));
}

TEST(LayoutAssignmentTest, UntiledArraysGetNoLayout) {
  auto m = testing::Parse(kNchw);
  EXPECT_TRUE(AssignTpuLayouts(*m->entry_computation(), hlo::TileRule{}).empty());
}

TEST(LayoutAssignmentTest, AnNchwActivationTakesTwiceNotFiveTimesItsBytes) {
  // The relu of f32[64,64,24,24] in its assigned {1,0,3,2}: 64 features on the lanes (2x), 64
  // images on the sublanes; row-major it would put 24 on the lanes (5.3x).
  hlo::Shape relu(hlo::PrimitiveType::kF32, {64, 64, 24, 24});
  const int64_t logical = relu.ByteSize();
  EXPECT_EQ(hlo::TiledByteSize(relu, hlo::TpuTile(relu, kTpuV3Tiles)), logical * 128 / 24);
  const hlo::Shape assigned = InLayout(relu, LayoutOf(kNchw, "relu"));
  EXPECT_EQ(hlo::TiledByteSize(assigned, hlo::TpuTile(assigned, kTpuV3Tiles)), 2 * logical);
}

}  // namespace
}  // namespace tpusim::compiler
