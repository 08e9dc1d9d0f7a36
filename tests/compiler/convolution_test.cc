// Convolutions on the MXUs (hlo/convolution_form.h, compiler/lower/lower_convolution.cc):
// the direct form (input bands streamed through VMEM, taps accumulated in the MXUs) and the
// filter-gradient form, checked bit for bit against the evaluator summing in the same K tiles,
// and checked to stream: no im2col array, the input read from HBM about once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config/config_loader.h"
#include "hlo/convolution_form.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

std::string Conv(const std::string& lhs, const std::string& rhs, const std::string& out,
                 const std::string& window, const std::string& labels,
                 const std::string& extra = "") {
  return "HloModule m\nENTRY e {\n  x = " + lhs + " parameter(0)\n  k = " + rhs +
         " parameter(1)\n  ROOT y = " + out + " convolution(x, k), window={" + window +
         "}, dim_labels=" + labels + extra + "\n}\n";
}

// Bytes core 0's dma.hbm_to_vmem instructions tagged `name` move.
int64_t HbmBytesRead(const isa::Program& p, const std::string& name) {
  int64_t bytes = 0;
  const auto& core = p.cores[0];
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const int32_t tag = core.hlo_tags[i];
    if (tag < 0 || p.hlo_names[static_cast<size_t>(tag)] != name ||
        core.instructions[i].opcode != isa::Opcode::kDmaHbmToVmem) {
      continue;
    }
    const auto d = core.instructions[i].As<isa::op::DmaHbmToVmem>();
    bytes += static_cast<int64_t>(d.n0 * d.n1 * d.n2 * d.elem_bytes);
  }
  return bytes;
}

// `text` compiled timing-only for tpu-v3: the streaming tests read the program, not values.
StatusOr<CompiledModule> CompileTimingOnly(const std::string& text, CompileOptions options = {}) {
  auto module = testing::Parse(text);
  if (module == nullptr) return InvalidArgument("the test module does not parse");
  options.timing_only = true;
  return Compile(*module, testing::Config("tpu-v3"), options);
}

// A 2-D window of size x size, no stride, padding or dilation.
hlo::Window SquareWindow(int64_t size) {
  hlo::Window w;
  w.dimensions.resize(2);
  for (auto& d : w.dimensions) d.size = size;
  return w;
}

// b01f_01io->b01f: input [N, H, W, C], kernel [KH, KW, C, O], output [N, OH, OW, O].
hlo::ConvolutionDimensionNumbers Nhwc2D() {
  hlo::ConvolutionDimensionNumbers dn;
  dn.input_batch_dimension = 0;
  dn.input_spatial_dimensions = {1, 2};
  dn.input_feature_dimension = 3;
  dn.kernel_spatial_dimensions = {0, 1};
  dn.kernel_input_feature_dimension = 2;
  dn.kernel_output_feature_dimension = 3;
  dn.output_batch_dimension = 0;
  dn.output_spatial_dimensions = {1, 2};
  dn.output_feature_dimension = 3;
  return dn;
}

class ConvolutionTest : public ::testing::TestWithParam<std::string> {};

// Exact: the direct kernel sums each output in the evaluator's order (same K tiles).
constexpr double kExact = 1e-30;

TEST_P(ConvolutionTest, StridedPaddedForward) {
  CheckAgainstEvaluator(Conv("f32[2,9,11,5]", "f32[3,3,5,7]", "f32[2,5,6,7]",
                             "size=3x3 stride=2x2 pad=1_1x1_2", "b01f_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, InputGradientWithLhsDilationAndOiKernel) {
  CheckAgainstEvaluator(Conv("f32[2,9,11,20]", "f32[3,3,7,20]", "f32[2,17,21,7]",
                             "size=3x3 pad=1_1x1_1 lhs_dilate=2x2", "b01f_01oi->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, WindowDilationBf16) {
  CheckAgainstEvaluator(Conv("bf16[3,12,14,6]", "bf16[3,2,6,9]", "bf16[3,8,12,9]",
                             "size=3x2 rhs_dilate=2x2", "b01f_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, ReversedWindowOtherDimLabels) {
  CheckAgainstEvaluator(Conv("f32[12,14,6,3]", "f32[3,3,6,9]", "f32[3,12,14,9]",
                             "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "01fb_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

// An input whose feature dimension is its last is read in place, whatever the order of its batch
// and spatial dimensions (01bf: Mask R-CNN's first layer; 0b1f; a 1-D [W, N, C]): no transpose is
// inserted before the direct kernel, and the values are exact.
TEST_P(ConvolutionTest, InputInAnyOrderWithFeaturesLastIsReadInPlace) {
  const struct {
    const char *lhs, *rhs, *out, *window, *labels;
  } cases[] = {
      {"f32[9,11,2,5]", "f32[3,3,5,7]", "f32[2,5,6,7]", "size=3x3 stride=2x2 pad=1_1x1_2",
       "01bf_01io->b01f"},
      {"f32[9,2,11,5]", "f32[3,3,7,5]", "f32[2,17,21,7]", "size=3x3 pad=1_1x1_1 lhs_dilate=2x2",
       "0b1f_01oi->b01f"},
      {"f32[30,4,16]", "f32[5,16,24]", "f32[4,13,24]", "size=5 stride=2", "0bf_0io->b0f"},
      {"f32[11,9,2,5]", "f32[3,3,5,7]", "f32[2,9,11,7]", "size=3x3 pad=1_1x1_1", "10bf_01io->b01f"},
  };
  for (const auto& c : cases) {
    auto run = CheckAgainstEvaluator(Conv(c.lhs, c.rhs, c.out, c.window, c.labels), GetParam(),
                                     kExact, 0, {}, true);
    for (const std::string& name : run.compiled.program.hlo_names) {
      EXPECT_EQ(name.find("y.t"), std::string::npos) << c.labels << ": " << name;
    }
  }
  // The negative: an input with its batch last (01fb) is still transposed first, under that name.
  auto run = CheckAgainstEvaluator(Conv("f32[9,11,5,2]", "f32[3,3,5,7]", "f32[2,9,11,7]",
                                        "size=3x3 pad=1_1x1_1", "01fb_01io->b01f"),
                                   GetParam(), kExact, 0, {}, true);
  const auto& names = run.compiled.program.hlo_names;
  EXPECT_NE(std::find(names.begin(), names.end(), "y.t"), names.end());
}

TEST_P(ConvolutionTest, OneSpatialDimension) {
  CheckAgainstEvaluator(
      Conv("f32[4,30,16]", "f32[5,16,24]", "f32[4,13,24]", "size=5 stride=2", "b0f_0io->b0f"),
      GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, FirstLayerWithThreeChannels) {
  CheckAgainstEvaluator(Conv("bf16[2,20,20,3]", "bf16[7,7,3,16]", "bf16[2,10,10,16]",
                             "size=7x7 stride=2x2 pad=3_3x3_3", "b01f_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, FilterGradient) {
  CheckAgainstEvaluator(Conv("f32[2,12,14,20]", "f32[2,12,14,24]", "f32[3,3,20,24]",
                             "size=12x14 pad=1_1x1_1", "f01b_i01o->01bf"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, FilterGradientWithRowDilationOtherLabels) {
  CheckAgainstEvaluator(Conv("f32[6,11,8,2]", "f32[5,6,2,7]", "f32[3,3,6,7]",
                             "size=5x6 rhs_dilate=2x1", "b01f_01io->01bf"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, FilterGradientOneSpatialDimension) {
  CheckAgainstEvaluator(
      Conv("bf16[4,40,9]", "bf16[4,38,5]", "bf16[3,9,5]", "size=38", "f0b_i0o->0bf"), GetParam(),
      kExact, 0, {}, true);
}

// The filter gradient of a strided convolution has a dilated window (rhs_dilate): the packing
// copies gather every second column.
TEST_P(ConvolutionTest, FilterGradientOfAStridedConvolution) {
  CheckAgainstEvaluator(Conv("f32[2,20,20,3]", "f32[2,10,10,6]", "f32[7,7,3,6]",
                             "size=10x10 pad=2_3x2_3 rhs_dilate=2x2", "f01b_i01o->01bf"),
                        GetParam(), kExact, 0, {}, true);
  CheckAgainstEvaluator(Conv("bf16[30,30,3,4]", "bf16[4,15,15,8]", "bf16[7,7,3,8]",
                             "size=15x15 pad=2_3x2_3 rhs_dilate=2x2", "01bf_i01o->01bf"),
                        GetParam(), kExact, 0, {}, true);
}

// Feature tiles (FilterGradientConvolution::feature_tiles): when the input features F fill the
// MXU's rows better than runs of window positions do, each K tile is a chunk of features at one
// window position (Mask R-CNN's 14 x 14 window over 512 ROIs); exact in the evaluator's order
// for that tiling, with padding, a dilated window and a last feature chunk shorter than R.
TEST_P(ConvolutionTest, FilterGradientWithFeatureTiles) {
  const std::string padded = Conv("f32[128,6,6,8]", "f32[128,6,6,4]", "f32[3,3,8,4]",
                                  "size=6x6 pad=1_1x1_1", "f01b_i01o->01bf");
  const std::string dilated = Conv("bf16[136,12,12,6]", "bf16[136,6,6,10]", "bf16[5,5,6,10]",
                                   "size=6x6 pad=1_2x1_2 rhs_dilate=2x2", "f01b_i01o->01bf");
  const auto chip = config::LoadChipConfig(GetParam());
  ASSERT_TRUE(chip.ok());
  const int64_t R = chip->core.mxu.rows;
  for (const auto& [text, F] :
       {std::pair{padded, int64_t{128}}, std::pair{dilated, int64_t{136}}}) {
    const testing::RunResult run = CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
    // Every matmul's K is one feature chunk: R features, or the F % R of the last chunk.
    int64_t matmuls = 0;
    for (const isa::Instruction& inst : run.compiled.program.cores[0].instructions) {
      if (inst.opcode != isa::Opcode::kMxuMatmul) continue;
      const auto k = static_cast<int64_t>(inst.As<isa::op::MxuMatmul>().k);
      EXPECT_TRUE(k == std::min(R, F) || k == F % R) << k;
      ++matmuls;
    }
    EXPECT_GT(matmuls, 0);
  }
}

TEST(ConvolutionFormTest, FilterGradientTilesFillTheArrayRows) {
  // Mask R-CNN: 196 window positions fill 196 of 256 rows; 512 features fill all of them.
  EXPECT_TRUE(hlo::FilterGradientFeatureTiles(512, 14, 14, /*cross_rows=*/true, 128));
  // SSD: 16 images are 16 of 128 rows; 38 x 38 positions fill 1444 of 1536.
  EXPECT_FALSE(hlo::FilterGradientFeatureTiles(16, 38, 38, true, 128));
  // A 7 x 7 window (ResNet's last stage) over 128 images: 49 of 128 rows against all of them.
  EXPECT_TRUE(hlo::FilterGradientFeatureTiles(128, 7, 7, true, 128));
  // Equal fill keeps the position tiles.
  EXPECT_FALSE(hlo::FilterGradientFeatureTiles(128, 16, 8, true, 128));
  // Not crossing window rows (a dilated window): 6 rows of ceil(6/8) tiles on an 8-row array.
  EXPECT_TRUE(hlo::FilterGradientFeatureTiles(136, 6, 6, false, 8));
}

// JAX and PyTorch write an input-gradient convolution with a `reverse` of the kernel's spatial
// dimensions; lower-convolution folds it into the window reversal (no reversed kernel copy).
TEST_P(ConvolutionTest, KernelReverseFoldsIntoWindowReversal) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[2,9,9,5] parameter(0)
  k = f32[3,3,7,5] parameter(1)
  r = f32[3,3,7,5] reverse(k), dimensions={0,1}
  ROOT y = f32[2,11,11,7] convolution(x, r), window={size=3x3 pad=2_2x2_2}, dim_labels=b01f_01oi->b01f
})";
  const testing::RunResult run = CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
  EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, "r"), 0);  // no kernel of its own
}

// A `reverse` of the kernel's spatial dimensions (both, or only the minor one) folded into the
// window, for every kernel dim_labels permutation, with few input features (taps folded into K
// tiles) and more: the reversed window has the K tiles of the evaluator's reverse + convolution,
// so every value is exact. Window 3x2, so a swapped H and W would not go unnoticed.
TEST_P(ConvolutionTest, ReversedKernelsInEveryLayoutAreExact) {
  std::string kernel = "01io";
  std::sort(kernel.begin(), kernel.end());
  do {
    for (const int64_t c : {4, 20}) {
      const std::string cs = std::to_string(c);
      std::string dims, reverse_hw, reverse_w;
      for (size_t d = 0; d < kernel.size(); ++d) {
        const char l = kernel[d];
        dims += std::string(d ? "," : "") + (l == '0' ? "3" : l == '1' ? "2" : l == 'i' ? cs : "5");
        if (l == '0' || l == '1') reverse_hw += std::string(reverse_hw.empty() ? "" : ",");
        if (l == '0' || l == '1') reverse_hw += std::to_string(d);
        if (l == '1') reverse_w = std::to_string(d);
      }
      for (const std::string& rev : {reverse_hw, reverse_w}) {
        SCOPED_TRACE(kernel + " C=" + cs + " reverse " + rev);
        const std::string text =
            "HloModule m\nENTRY e {\n  x = f32[2,7,6," + cs + "] parameter(0)\n  k = f32[" + dims +
            "] parameter(1)\n  r = f32[" + dims + "] reverse(k), dimensions={" + rev +
            "}\n  ROOT y = f32[2,7,6,5] convolution(x, r), window={size=3x2 pad=1_1x1_0}, " +
            "dim_labels=b01f_" + kernel + "->b01f\n}\n";
        CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
      }
    }
  } while (std::next_permutation(kernel.begin(), kernel.end()));
}

// A reversed window without a direct form (a depthwise convolution, on the VPU; a feature map
// smaller than the window) reverses its kernel with one `reverse` (lowered as a negative-stride
// copy), not one slice per window position and a concatenate. Feature groups on the MXU (direct
// per group) read the kernel reversed as they load it: no `reverse`.
TEST(ConvolutionUnfoldTest, UnfoldedReversalIsOneReverse) {
  for (const char* conv :
       {"  ROOT y = f32[2,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1 "
        "rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=8\n",
        "  ROOT y = f32[2,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1 "
        "rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=8\n"}) {
    auto module = testing::Parse(std::string("HloModule m\nENTRY e {\n  x = f32[2,6,6,8] "
                                             "parameter(0)\n  k = f32[3,3,1,8] parameter(1)\n") +
                                 conv + "}\n");
    ASSERT_NE(module, nullptr);
    CompileOptions o;
    o.dump_after = "lower-convolution";
    auto r = Compile(*module, testing::Config("tpu-v4"), o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NE(r->dump.find(" reverse("), std::string::npos) << r->dump;
    EXPECT_EQ(r->dump.find("reversed.1 = "), std::string::npos) << r->dump;
    EXPECT_EQ(r->dump.find("rhs_reversal"), std::string::npos) << r->dump;
  }
  auto module = testing::Parse(Conv("f32[2,6,6,64]", "f32[3,3,32,6]", "f32[2,6,6,6]",
                                    "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01io->b01f",
                                    ", feature_group_count=2"));
  ASSERT_NE(module, nullptr);
  CompileOptions o;
  o.dump_after = "lower-convolution";
  auto r = Compile(*module, testing::Config("tpu-v4"), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->dump.find(" reverse("), std::string::npos) << r->dump;
  EXPECT_NE(r->dump.find("rhs_reversal=1x1"), std::string::npos) << r->dump;
}

// Reversed windows with the other window attributes: the input gradient of a strided convolution
// (lhs dilation), a dilated window (taps never folded), other input and output labels, feature
// groups (im2col + dot) and feature maps smaller than the window (the filter-gradient form), the
// last two with the kernel reversed beforehand: all exact.
TEST_P(ConvolutionTest, ReversedWindowsWithDilationsAndGroupsAreExact) {
  CheckAgainstEvaluator(Conv("f32[2,5,4,6]", "f32[3,3,7,6]", "f32[2,10,8,7]",
                             "size=3x3 pad=2_1x2_1 lhs_dilate=2x2 rhs_reversal=1x1",
                             "b01f_01oi->b01f"),
                        GetParam(), kExact, 0, {}, true);
  CheckAgainstEvaluator(Conv("bf16[2,9,8,5]", "bf16[2,3,5,6]", "bf16[2,7,4,6]",
                             "size=2x3 rhs_dilate=2x2 rhs_reversal=0x1", "b01f_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
  CheckAgainstEvaluator(Conv("f32[3,8,9,2]", "f32[3,4,3,3]", "f32[2,4,6,9]",
                             "size=3x3 pad=0_0x1_1 rhs_reversal=1x0", "f01b_io01->bf01"),
                        GetParam(), kExact, 0, {}, true);
  CheckAgainstEvaluator(Conv("f32[2,6,6,8]", "f32[3,3,4,6]", "f32[2,6,6,6]",
                             "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01io->b01f",
                             ", feature_group_count=2"),
                        GetParam(), kExact, 0, {}, true);
  // A feature map smaller than the window (no direct form): reversed by a `reverse`, and natively.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[2,2,2,12] parameter(0)
  k = f32[3,3,12,12] parameter(1)
  r = f32[3,3,12,12] reverse(k), dimensions={0,1}
  ROOT y = f32[2,2,2,12] convolution(x, r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f
})",
                        GetParam(), kExact, 0, {}, true);
  CheckAgainstEvaluator(Conv("f32[1,2,3,6]", "f32[3,3,6,5]", "f32[1,2,3,5]",
                             "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
  // A depthwise layer's input gradient as JAX writes it: a `reverse` of the kernel.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[2,7,7,6] parameter(0)
  k = f32[3,3,1,6] parameter(1)
  r = f32[3,3,1,6] reverse(k), dimensions={0,1}
  ROOT y = f32[2,7,7,6] convolution(x, r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=6
})",
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, BiasAndResidualFusedIntoThePops) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = bf16[2,10,12,20] parameter(0)
  k = bf16[3,3,20,24] parameter(1)
  b = f32[24] parameter(2)
  r = bf16[2,10,12,24] parameter(3)
  c = bf16[2,10,12,24] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = bf16[24] convert(b)
  bc = bf16[2,10,12,24] broadcast(bb), dimensions={3}
  m = bf16[2,10,12,24] multiply(c, bc)
  ROOT a = bf16[2,10,12,24] add(m, r)
})";
  const testing::RunResult run = CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
  // output-fusion-scheduling moved the bias convert before the convolution, so the multiply and
  // the add run on each popped block: the convolution's own result never reaches HBM.
  EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, "c", isa::Opcode::kDmaVmemToHbm), 0);
}

// Operand fusion of the filter-gradient form (AddConvPrologues): a batch-norm's scale and shift of
// the activations (per-channel, broadcast along the minor dimension), with padding, and a scale of
// the output gradient by a full array, run on each band as it is loaded — the scaled operands never
// reach HBM and the padding stays zero.
TEST_P(ConvolutionTest, FilterGradientOperandsComputedAsTheBandsLoad) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[2,12,14,20] parameter(0)
  s = f32[20] parameter(1)
  t = f32[20] parameter(2)
  g = f32[2,12,14,24] parameter(3)
  h = f32[2,12,14,24] parameter(4)
  sb = f32[2,12,14,20] broadcast(s), dimensions={3}
  tb = f32[2,12,14,20] broadcast(t), dimensions={3}
  xs = f32[2,12,14,20] multiply(x, sb)
  xn = f32[2,12,14,20] add(xs, tb)
  gh = f32[2,12,14,24] multiply(g, h)
  ROOT y = f32[3,3,20,24] convolution(xn, gh), window={size=12x14 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
})";
  const testing::RunResult run = CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
  for (const char* op : {"xs", "xn", "gh"}) {
    EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, op, isa::Opcode::kDmaVmemToHbm), 0)
        << op;
  }
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "xn", isa::Opcode::kVpuBinary), 0);
}

// A filter gradient whose input has its images (the form's F) minor — SSD's first layer,
// `bf16[300,300,3,16]` 01bf — is read in place (no transpose through HBM before the kernel), and
// the input's per-channel scale and shift run on each band as it is loaded; also an input in
// another order with its images last (b01f). Exact against the evaluator.
TEST_P(ConvolutionTest, ImageMinorFilterGradientInputIsReadInPlace) {
  const std::string fused = R"(
HloModule m
ENTRY e {
  x = bf16[30,30,3,4] parameter(0)
  s = bf16[3] parameter(1)
  t = bf16[3] parameter(2)
  g = bf16[4,15,15,8] parameter(3)
  sb = bf16[30,30,3,4] broadcast(s), dimensions={2}
  tb = bf16[30,30,3,4] broadcast(t), dimensions={2}
  xs = bf16[30,30,3,4] multiply(x, sb)
  xn = bf16[30,30,3,4] add(xs, tb)
  ROOT y = bf16[7,7,3,8] convolution(xn, g), window={size=15x15 pad=2_3x2_3 rhs_dilate=2x2}, dim_labels=01bf_i01o->01bf
})";
  const testing::RunResult run = CheckAgainstEvaluator(fused, GetParam(), kExact, 0, {}, true);
  const auto& names = run.compiled.program.hlo_names;
  EXPECT_EQ(std::find(names.begin(), names.end(), "y.t"), names.end());
  for (const char* op : {"xs", "xn"}) {
    EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, op, isa::Opcode::kDmaVmemToHbm), 0)
        << op;
  }
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "xn", isa::Opcode::kVpuBinary), 0);
  const testing::RunResult other =
      CheckAgainstEvaluator(Conv("f32[6,11,8,2]", "f32[5,6,2,7]", "f32[3,3,6,7]",
                                 "size=5x6 rhs_dilate=2x1", "b01f_01io->01bf"),
                            GetParam(), kExact, 0, {}, true);
  // One transpose (y.t: the 01io kernel to i01o), none of the input (it would be y.t.1).
  const auto& other_names = other.compiled.program.hlo_names;
  EXPECT_NE(std::find(other_names.begin(), other_names.end(), "y.t"), other_names.end());
  EXPECT_EQ(std::find(other_names.begin(), other_names.end(), "y.t.1"), other_names.end());
}

// A kernel laid out with its window column next to its output features ({3,1,2,0}: XLA's layout
// of a space-to-depth first layer, hlo::KernelFoldsWindowColumnsIntoN) runs with the window
// columns folded into N: per window row one matmul over every input column a block reads, the
// columns' partial sums added on the VPU — exact against the evaluator summing column by column.
TEST_P(ConvolutionTest, WindowColumnsInNSpaceToDepthStem) {
  CheckAgainstEvaluator(Conv("bf16[10,23,2,12]{3,2,1,0}", "bf16[4,4,12,64]{3,1,2,0}",
                             "bf16[2,10,23,64]{3,0,2,1}", "size=4x4 pad=1_2x1_2",
                             "01bf_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

TEST_P(ConvolutionTest, WindowColumnsInNStridedF32) {
  CheckAgainstEvaluator(Conv("f32[2,17,19,5]", "f32[3,5,5,40]{3,1,2,0}", "f32[2,9,10,40]",
                             "size=3x5 stride=2x2 pad=1_1x2_2", "b01f_01io->b01f"),
                        GetParam(), kExact, 0, {}, true);
}

// The column sums feed the convolution's fused consumers (bias, ReLU, a batch-norm statistic):
// the epilogue runs on the summed result block, never on the popped partial sums.
TEST_P(ConvolutionTest, WindowColumnsInNWithAnEpilogue) {
  CheckAgainstEvaluator(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[3,12,13,6] parameter(0)
  k = bf16[3,3,6,32]{3,1,2,0} parameter(1)
  bias = f32[32] parameter(2)
  y = f32[3,12,13,32] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[3,12,13,32] broadcast(bias), dimensions={3}
  z = f32[3,12,13,32] add(y, bb)
  zero = f32[] constant(0)
  zz = f32[3,12,13,32] broadcast(zero), dimensions={}
  r = f32[3,12,13,32] maximum(z, zz)
  sum = f32[32] reduce(r, zero), dimensions={0,1,2}, to_apply=add
  ROOT t = (f32[3,12,13,32], f32[32]) tuple(r, sum)
}
)",
                        GetParam(), 1e-5, 1e-5, {}, true);
}

INSTANTIATE_TEST_SUITE_P(Configs, ConvolutionTest, ::testing::Values("tiny", "tpu-v3", "tpu-v4"));

// A kernel too large for VMEM is streamed in blocks of window positions (and output features), not
// cut into input-feature chunks, so every output is still summed in the direct form's K order:
// exact. (Cut by input features, they were summed chunk by chunk: up to 0.0039 off in bf16.)
TEST(ConvolutionBlocksTest, KernelLargerThanVmemKeepsTheSummationOrder) {
  struct Case {
    const char* config;
    std::string text;
    int64_t resident_bytes;  // the whole kernel in VMEM (an oi kernel twice: staged, transposed)
  };
  const Case cases[] = {
      {"tiny",
       Conv("f32[2,5,5,64]", "f32[3,3,256,64]", "f32[2,5,5,256]", "size=3x3 pad=1_1x1_1",
            "b01f_01oi->b01f"),
       2 * 9 * 256 * 64 * 4},
      {"tiny",
       Conv("bf16[2,6,4,64]", "bf16[3,3,64,1024]", "bf16[2,6,4,1024]", "size=3x3 pad=1_1x1_1",
            "b01f_01io->b01f"),
       9 * 64 * 1024 * 2},
      {"tpu-v3",
       Conv("f32[1,3,5,384]", "f32[3,3,640,384]", "f32[1,3,5,640]",
            "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01oi->b01f"),
       2 * 9 * 640 * 384 * 4},
      {"tpu-v4",
       Conv("f32[1,3,5,384]", "f32[3,3,640,384]", "f32[1,3,5,640]",
            "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01oi->b01f"),
       2 * 9 * 640 * 384 * 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    // More than the two thirds of VMEM the kernel may take: it cannot stay resident whole.
    EXPECT_GT(c.resident_bytes, testing::Config(c.config).core.vmem_bytes * 2 / 3);
    CheckAgainstEvaluator(c.text, c.config, kExact, 0, {}, true);
  }
}

// When a whole image's output rows do not fit one block (a 512 x 486 f32 kernel takes most of
// tpu-v3's VMEM beside a scaling epilogue), its 19 rows are cut into blocks of even size (7, 6, 6 or 10, 9) rather than
// halved (9, 9, 1): a one-row block streams 19 LHS rows per weight tile, too few to hide a
// 128-cycle weight load. Every popped block of an image holds about the same number of rows.
TEST(ConvolutionBlocksTest, OutputRowsAreCutIntoEvenBlocks) {
  auto compiled = CompileTimingOnly(
      "HloModule m\nENTRY e {\n  x = bf16[2,19,19,512] parameter(0)\n"
      "  k = f32[3,3,512,486] parameter(1)\n  s = f32[486] parameter(2)\n"
      "  y = f32[2,19,19,486] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f\n"
      "  b = f32[2,19,19,486] broadcast(s), dimensions={3}\n"
      "  ROOT z = f32[2,19,19,486] multiply(y, b)\n}\n");
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  std::vector<int64_t> block_rows;
  for (const isa::Instruction& i : compiled->program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuPop) {
      block_rows.push_back(static_cast<int64_t>(i.As<isa::op::MxuPop>().m));
    }
  }
  ASSERT_FALSE(block_rows.empty());
  const auto [lo, hi] = std::minmax_element(block_rows.begin(), block_rows.end());
  EXPECT_LT(*lo, 19 * 19) << "the test needs an image cut into several blocks";
  EXPECT_LE(*hi - *lo, 19) << "blocks differ by more than one output row";
}

// A batch-norm backward's chain on the popped blocks: six full-size operands and three
// reductions. With the kernel's usual two thirds of VMEM the epilogue does not fit tpu-v3's 16 MiB;
// smaller blocks make it fit, so no member goes through HBM but the stored result. (Shapes of the
// calibration set's SSD input-gradient fusions; compiled timing-only — the retry changes only the
// blocks, whose values the cases above check.)
TEST(ConvolutionEpilogueTest, LongEpilogueGetsSmallerBlocksRatherThanKernelsOfItsOwn) {
  const std::string text = R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[16,38,38,256] parameter(0)
  k = f32[3,3,256,256] parameter(1)
  p1 = bf16[16,38,38,256] parameter(2)
  p2 = bf16[16,38,38,256] parameter(3)
  p3 = bf16[16,38,38,256] parameter(4)
  p4 = bf16[16,38,38,256] parameter(5)
  p5 = bf16[16,38,38,256] parameter(6)
  v1 = f32[256] parameter(7)
  v2 = f32[256] parameter(8)
  c = bf16[16,38,38,256] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f
  o1 = bf16[16,38,38,256] multiply(c, p1)
  o2 = bf16[16,38,38,256] add(o1, p2)
  o3 = bf16[16,38,38,256] multiply(o2, p3)
  o4 = bf16[16,38,38,256] add(o3, p4)
  w1 = bf16[256] convert(v1)
  b1 = bf16[16,38,38,256] broadcast(w1), dimensions={3}
  o5 = bf16[16,38,38,256] multiply(o4, b1)
  w2 = bf16[256] convert(v2)
  b2 = bf16[16,38,38,256] broadcast(w2), dimensions={3}
  o6 = bf16[16,38,38,256] add(o5, b2)
  o7 = bf16[16,38,38,256] add(o6, p5)
  f = f32[16,38,38,256] convert(o7)
  z = f32[] constant(0)
  r0 = f32[256] reduce(f, z), dimensions={0,1,2}, to_apply=add_f32
  f2 = f32[16,38,38,256] multiply(f, f)
  r1 = f32[256] reduce(f2, z), dimensions={0,1,2}, to_apply=add_f32
  f3 = f32[16,38,38,256] multiply(f2, f)
  r2 = f32[256] reduce(f3, z), dimensions={0,1,2}, to_apply=add_f32
  ROOT t = (f32[256], f32[256], f32[256], bf16[16,38,38,256]) tuple(r0, r1, r2, o7)
})";
  auto compiled = CompileTimingOnly(text);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  for (const char* op : {"c", "o1", "o2", "o3", "o4", "o5", "o6", "f", "f2", "f3"}) {
    EXPECT_EQ(testing::InstructionsTagged(compiled->program, op, isa::Opcode::kDmaVmemToHbm), 0)
        << op;
  }
}

// The direct kernel streams: no im2col concatenate, and the input is read from HBM about once
// (its halo rows aside) with the kernel resident in VMEM.
TEST(ConvolutionStreamingTest, InputReadAboutOnceNoIm2col) {
  CompileOptions options;
  options.dump_after = "lower-convolution";
  auto compiled = CompileTimingOnly(Conv("bf16[4,56,56,64]", "bf16[3,3,64,64]", "bf16[4,56,56,64]",
                                    "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_EQ(compiled->dump.find("concatenate"), std::string::npos) << compiled->dump;
  const int64_t input = 4 * 56 * 56 * 64 * 2, kernel = 3 * 3 * 64 * 64 * 2;
  const int64_t read = HbmBytesRead(compiled->program, "y");
  EXPECT_GE(read, input + kernel);
  EXPECT_LE(read, input * 13 / 10 + kernel) << "halo overhead above 30 %";
}

// A window one row tall striding over two rows (a ResNet 1x1 stride-2 projection) reads every
// other input row only, so the kernel loads only those: half the input from HBM, not all of it;
// values stay exact with padding that shifts which rows are read, and with stride 3.
TEST(ConvolutionStreamingTest, RowsNoWindowReadsAreNotLoaded) {
  auto compiled = CompileTimingOnly(Conv("bf16[4,56,56,256]", "bf16[1,1,256,128]",
                                         "bf16[4,28,28,128]", "size=1x1 stride=2x2",
                                         "b01f_01io->b01f"));
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const int64_t input = 4 * 56 * 56 * 256 * 2, kernel = 256 * 128 * 2;
  const int64_t read = HbmBytesRead(compiled->program, "y");
  // Even rows, each up to its last column a window reads (54 of 0..55): 55 of 56 columns.
  EXPECT_GE(read, input / 2 / 56 * 55 + kernel);
  EXPECT_LE(read, input / 2 + kernel) << "more than the rows the windows read";
  for (const char* config : {"tiny", "tpu-v3"}) {
    for (const char* window : {"size=1x1 stride=2x2 pad=1_1x0_1", "size=1x1 stride=2x2 pad=0_1x0_1",
                               "size=1x1 stride=3x2 pad=2_2x0_1"}) {
      SCOPED_TRACE(std::string(config) + " " + window);
      const std::string out = std::string(window).find("pad=1_1") != std::string::npos
                                  ? "f32[2,6,4,24]"
                                  : "f32[2,5,4,24]";
      CheckAgainstEvaluator(Conv("f32[2,9,7,20]", "f32[1,1,20,24]", out, window,
                                 "b01f_01io->b01f"),
                            config, kExact, 0, {}, true);
    }
  }
}

// A 64-feature output is one N tile: on a core of two MXUs (tpu-v3) both load the kernel's tiles
// and each takes a contiguous half of a block's output rows (row split), so neither idles; the
// values are checked exactly against the evaluator by the parameterized cases above.
TEST(ConvolutionStreamingTest, OneNTileUsesEveryMxu) {
  auto compiled = CompileTimingOnly(Conv("bf16[2,16,16,64]", "bf16[3,3,64,64]", "bf16[2,16,16,64]",
                                    "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"));
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  int64_t matmuls[2] = {0, 0}, loads[2] = {0, 0};
  for (const isa::Instruction& i : compiled->program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuMatmul) ++matmuls[i.As<isa::op::MxuMatmul>().mxu];
    if (i.opcode == isa::Opcode::kMxuLoadWeights) ++loads[i.As<isa::op::MxuLoadWeights>().mxu];
  }
  EXPECT_GT(matmuls[0], 0);
  EXPECT_EQ(matmuls[0], matmuls[1]);
  EXPECT_EQ(loads[0], loads[1]);
}

// 324 output features are 3 N tiles: on two MXUs one would stream 2 tiles and the other 1. Each
// tile's rows are cut into 2 groups instead and the 6 (tile, group) units go round-robin, so
// both MXUs stream the same number of rows; the values are checked against the evaluator.
TEST(ConvolutionStreamingTest, OddTileCountsAreRowSplitAcrossTheMxus) {
  const std::string hlo = Conv("bf16[2,12,12,64]", "bf16[3,3,64,324]", "f32[2,12,12,324]",
                               "size=3x3 pad=1_1x1_1", "b01f_01io->b01f");
  auto run = testing::CheckAgainstEvaluator(hlo, "tpu-v3", 1e-3, 1e-3);
  int64_t rows[2] = {0, 0};
  for (const isa::Instruction& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode != isa::Opcode::kMxuMatmul) continue;
    const auto mm = i.As<isa::op::MxuMatmul>();
    rows[mm.mxu] += static_cast<int64_t>(mm.m);
  }
  EXPECT_GT(rows[0], 0);
  EXPECT_EQ(rows[0], rows[1]);
}

// An input gradient of a stride-2 convolution (lhs_dilate=2x2): half the window rows of each
// output row fall on dilation holes or padding, whose products are zeros. Those matmuls are not
// issued (only the accumulators' first tile streams every row), and the values stay exact.
TEST(ConvolutionStreamingTest, WindowRowsOnHolesAndPaddingAreNotStreamed) {
  const std::string hlo = Conv("bf16[2,8,8,128]", "bf16[3,3,128,128]", "f32[2,15,15,128]",
                               "size=3x3 pad=1_1x1_1 lhs_dilate=2x2", "b01f_01io->b01f");
  auto run = testing::CheckAgainstEvaluator(hlo, "tpu-v3", kExact, 0, {}, true);
  int64_t rows = 0;
  for (const isa::Instruction& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuMatmul) {
      rows += static_cast<int64_t>(i.As<isa::op::MxuMatmul>().m);
    }
  }
  const int64_t dense = 2 * 15 * 15 * 9;  // every tap over every output pixel (one N tile)
  // Per output row, window rows on input rows: 1 of 3 for even rows, 2 of 3 for odd rows (the
  // first row's top tap is padding); plus the first tap's rows, always streamed.
  EXPECT_LT(rows, dense * 6 / 10);
  EXPECT_GT(rows, dense * 4 / 10);
}

// With double-buffered weights the next tile's load on an MXU follows the current tile's first
// (latching) matmul, so it shifts in while the other per-row matmuls stream: some load is followed
// by non-latching matmuls of the previous tile on the same MXU.
TEST(ConvolutionStreamingTest, NextWeightTileLoadsWhileTheCurrentStreams) {
  auto compiled = CompileTimingOnly(Conv("bf16[2,16,16,128]", "bf16[3,3,128,128]", "bf16[2,16,16,128]",
                                    "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"));
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  int64_t hoisted = 0;
  bool loaded_ahead[2] = {false, false};
  for (const isa::Instruction& i : compiled->program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuLoadWeights) {
      loaded_ahead[i.As<isa::op::MxuLoadWeights>().mxu] = true;
    } else if (i.opcode == isa::Opcode::kMxuMatmul) {
      const auto mm = i.As<isa::op::MxuMatmul>();
      if (mm.latch) {
        loaded_ahead[mm.mxu] = false;
      } else if (loaded_ahead[mm.mxu]) {
        ++hoisted;  // streams the current tile after the next one's load was issued
        loaded_ahead[mm.mxu] = false;
      }
    }
  }
  EXPECT_GT(hoisted, 0);
}

// The first step's kernel block arrives in parts of window positions and the first weight tile
// waits for its own part only, not for the whole kernel (the prologue of the K-tile pipeline):
// the wait just before the first mxu.load_weights covers one tap's [C, O] weights.
TEST(ConvolutionStreamingTest, FirstWeightTileWaitsForItsOwnTapOnly) {
  auto compiled = CompileTimingOnly(Conv("bf16[2,16,16,128]", "bf16[3,3,128,128]", "bf16[2,16,16,128]",
                                    "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"));
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const auto& code = compiled->program.cores[0].instructions;
  std::map<uint64_t, int64_t> bytes_on_flag;  // HBM->VMEM bytes per flag before the first load
  int64_t waited = -1;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i].opcode == isa::Opcode::kDmaHbmToVmem) {
      const auto d = code[i].As<isa::op::DmaHbmToVmem>();
      bytes_on_flag[d.flag] += static_cast<int64_t>(d.n0 * d.n1 * d.n2 * d.elem_bytes);
    } else if (code[i].opcode == isa::Opcode::kMxuLoadWeights) {
      ASSERT_GT(i, 0u);
      ASSERT_EQ(code[i - 1].opcode, isa::Opcode::kSyncWait);
      waited = bytes_on_flag[code[i - 1].As<isa::op::SyncWait>().flag];
      break;
    }
  }
  EXPECT_EQ(waited, 128 * 128 * 2);  // one tap of the 3x3 kernel, not all nine
  for (const char* config : {"tiny", "tpu-v3"}) {  // and the values stay exact
    CheckAgainstEvaluator(Conv("f32[2,9,11,5]", "f32[3,3,5,7]", "f32[2,9,11,7]",
                               "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"),
                          config, kExact, 0, {}, true);
  }
}

// With two accumulator sets, a block's pop is issued under the next block's matmuls (after the
// next step's first wave), not after all of them: on tpu-v1's one MXU a [8,19,19,236] 3x3
// convolution runs as two blocks of 1,444 output rows, and the first block's pop comes before the
// second block's last matmul — only the last block drains after the last matmul.
TEST(ConvolutionStreamingTest, PreviousBlockPopsUnderTheNextBlocksMatmuls) {
  auto module = testing::Parse(Conv("s8[8,19,19,236]", "s8[3,3,236,236]", "s32[8,19,19,236]",
                                    "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"));
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.timing_only = true;
  auto compiled = Compile(*module, testing::Config("tpu-v1"), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const auto& code = compiled->program.cores[0].instructions;
  std::vector<size_t> pops;
  size_t last_matmul = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i].opcode == isa::Opcode::kMxuPop) pops.push_back(i);
    if (code[i].opcode == isa::Opcode::kMxuMatmul) last_matmul = i;
  }
  ASSERT_EQ(pops.size(), 2u);  // two blocks, one N tile, one MXU
  EXPECT_LT(pops[0], last_matmul);
  EXPECT_GT(pops[1], last_matmul);
}

// Without base dilation the band's DMA writes one dense block of pixels, so only its border
// (padding rows and columns) is zero-filled, not the whole band; values stay exact where bands
// are reused across steps (tiny's small VMEM: many bands, stale data in every reused one).
TEST(ConvolutionStreamingTest, OnlyTheBandsPaddingIsZeroFilled) {
  const std::string hlo = Conv("bf16[2,16,16,128]", "bf16[3,3,128,128]", "f32[2,16,16,128]",
                               "size=3x3 pad=1_1x1_1", "b01f_01io->b01f");
  auto run = testing::CheckAgainstEvaluator(hlo, "tpu-v3", kExact, 0, {}, true);
  int64_t filled = 0, loaded = 0;
  for (const isa::Instruction& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kVpuFill) {
      filled += static_cast<int64_t>(i.As<isa::op::VpuFill>().count);
    } else if (i.opcode == isa::Opcode::kDmaHbmToVmem) {
      const auto d = i.As<isa::op::DmaHbmToVmem>();
      loaded += static_cast<int64_t>(d.n0 * d.n1 * d.n2);
    }
  }
  loaded -= 3 * 3 * 128 * 128;  // the kernel; the rest are the bands' input pixels
  ASSERT_GT(loaded, 0);
  EXPECT_GT(filled, 0);
  // A 1-pixel border around 16 x 16 images: 18 x 18 - 16 x 16 = 68 pixels per 256 loaded (the
  // whole band would be 324).
  EXPECT_EQ(filled * 256, loaded * 68);
  for (const char* config : {"tiny", "tpu-v4"}) {
    CheckAgainstEvaluator(Conv("f32[3,13,10,6]", "f32[3,3,6,5]", "f32[3,13,10,5]",
                               "size=3x3 pad=1_1x2_0", "b01f_01io->b01f"),
                          config, kExact, 0, {}, true);
  }
}

// Small feature counts fold consecutive taps of a window row into one K tile (XLA's TPU handling
// of a first layer's 3 channels); larger ones take one tap per tile.
// The window-column form streams every input column of a row once per window row (K = the 12
// features, no taps folded into K) through weights [12, KW x 64] on both MXUs, and sums the
// columns on the VPU; the row-major kernel of the same convolution folds its taps into K instead.
TEST(ConvolutionStreamingTest, WindowColumnsInNStreamsEachInputRowOncePerWindowRow) {
  const auto program = [](const std::string& kernel_layout) {
    return CompileTimingOnly(Conv("bf16[10,23,2,12]{3,2,1,0}", "bf16[4,4,12,64]" + kernel_layout,
                                  "bf16[2,10,23,64]{3,0,2,1}", "size=4x4 pad=1_2x1_2",
                                  "01bf_01io->b01f"));
  };
  auto columns = program("{3,1,2,0}");
  ASSERT_TRUE(columns.ok()) << columns.status().message();
  int64_t rows = 0, copies = 0;
  for (const isa::Instruction& i : columns->program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuMatmul) {
      const auto mm = i.As<isa::op::MxuMatmul>();
      EXPECT_EQ(mm.k, 12u);
      EXPECT_EQ(mm.n, 128u);  // 4 window columns x 64 outputs on two 128-column MXUs
      rows += static_cast<int64_t>(mm.m);
    }
    if (i.opcode == isa::Opcode::kVpuCopy) ++copies;
  }
  // Per MXU, 26 input columns (23 + 1 + 2 padding) for each of 2 images x 10 output rows x 4
  // window rows but the 3 per image that lie on padding rows (oh 8: kh 3; oh 9: kh 2, 3).
  EXPECT_EQ(rows, 2 * 26 * (2 * 10 * 4 - 2 * 3));
  EXPECT_GT(copies, 0);
  auto folded = program("{3,2,1,0}");
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  bool k_folded = false;
  for (const isa::Instruction& i : folded->program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuMatmul) k_folded |= i.As<isa::op::MxuMatmul>().k > 12;
  }
  EXPECT_TRUE(k_folded);
}

TEST(ConvolutionFormTest, KernelLayoutFoldsWindowColumnsIntoN) {
  hlo::Window w = SquareWindow(4);
  const hlo::ConvolutionDimensionNumbers dn = Nhwc2D();
  EXPECT_TRUE(hlo::KernelFoldsWindowColumnsIntoN({3, 1, 2, 0}, dn));
  EXPECT_FALSE(hlo::KernelFoldsWindowColumnsIntoN({3, 2, 1, 0}, dn));  // features next to o
  EXPECT_FALSE(hlo::KernelFoldsWindowColumnsIntoN({1, 3, 2, 0}, dn));  // o not minor
  EXPECT_FALSE(hlo::KernelFoldsWindowColumnsIntoN({}, dn));
  const std::vector<int64_t> in{1, 20, 20, 12}, k{4, 4, 12, 64}, out{1, 17, 17, 64};
  auto p = hlo::PlanDirectConvolution(in, k, out, w, dn, 1, 1, 128, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->columns_in_n);
  ASSERT_EQ(p->k_tiles.size(), 4u);  // one K tile per window row: its 12 features
  EXPECT_EQ(p->k_tiles[3].kh, 3);
  EXPECT_EQ(p->k_tiles[3].k(), 12);
  // The evaluator's order: column kw's taps (kh, kw) for kh = 0..3, then the next column.
  const hlo::ConvSummationOrder order =
      hlo::ConvolutionSummationOrder(in, k, out, w, dn, 1, 1, 128, true);
  EXPECT_EQ(order.tile_ends.size(), 16u);
  EXPECT_EQ(order.partial_ends, (std::vector<int64_t>{4, 8, 12, 16}));
  ASSERT_EQ(order.order.size(), 4u * 4u * 12u);
  EXPECT_EQ(order.order[12], (1 * 4 + 0) * 12);  // (kh 1, kw 0), feature 0
  EXPECT_EQ(order.order[48], (0 * 4 + 1) * 12);  // (kh 0, kw 1), feature 0
  // Not taken: more than R/2 features, a window dilated along W.
  EXPECT_FALSE(hlo::PlanDirectConvolution({1, 20, 20, 96}, {4, 4, 96, 64}, out, w, dn, 1, 1, 128,
                                          true)
                   ->columns_in_n);
  w.dimensions[1].window_dilation = 2;
  EXPECT_FALSE(hlo::PlanDirectConvolution(in, k, {1, 17, 14, 64}, w, dn, 1, 1, 128, true)
                   ->columns_in_n);
}

TEST(ConvolutionFormTest, SmallFeatureCountsFoldTaps) {
  hlo::Window w = SquareWindow(7);
  const hlo::ConvolutionDimensionNumbers dn = Nhwc2D();
  auto small =
      hlo::PlanDirectConvolution({1, 20, 20, 3}, {7, 7, 3, 64}, {1, 14, 14, 64}, w, dn, 1, 1, 128);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->k_tiles.size(), 7u);  // one tile per window row: 7 taps x 3 features
  EXPECT_EQ(small->k_tiles[0].k(), 21);
  auto wide = hlo::PlanDirectConvolution({1, 20, 20, 256}, {7, 7, 256, 64}, {1, 14, 14, 64}, w, dn,
                                         1, 1, 128);
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->k_tiles.size(), 7u * 7u * 2u);  // per tap, two 128-feature tiles
  // A reversed window folds the same taps (its weights are laid out in input-offset order).
  w.dimensions[0].window_reversal = w.dimensions[1].window_reversal = true;
  auto reversed =
      hlo::PlanDirectConvolution({1, 20, 20, 3}, {7, 7, 3, 64}, {1, 14, 14, 64}, w, dn, 1, 1, 128);
  ASSERT_TRUE(reversed.has_value());
  EXPECT_EQ(reversed->k_tiles.size(), 7u);
  EXPECT_EQ(reversed->k_tiles[0].k(), 21);
  w.dimensions[0].window_reversal = w.dimensions[1].window_reversal = false;
  // A window larger than the output is a filter gradient, not a direct convolution.
  EXPECT_FALSE(
      hlo::PlanDirectConvolution({1, 20, 20, 3}, {7, 7, 3, 64}, {1, 2, 2, 64}, w, dn, 1, 1, 128)
          .has_value());
}

}  // namespace
}  // namespace tpusim::compiler
