// Grouped convolutions without im2col (hlo/convolution_form.h): few input features per group (a
// depthwise convolution, its multiplier, its input gradient) on the VPU
// (compiler/lower/lower_vpu_convolution.cc), larger groups as one direct MXU convolution per group
// (compiler/lower/lower_convolution.cc). Values are checked bit for bit against the evaluator
// summing in the form's order; programs are checked to hold no im2col concatenate or dot.
#include <gtest/gtest.h>

#include <string>

#include "hlo/convolution_form.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

constexpr double kExact = 1e-30;

std::string GroupedConv(const std::string& lhs, const std::string& rhs, const std::string& out,
                        const std::string& window, const std::string& labels, int64_t groups) {
  return "HloModule m\nENTRY e {\n  x = " + lhs + " parameter(0)\n  k = " + rhs +
         " parameter(1)\n  ROOT y = " + out + " convolution(x, k), window={" + window +
         "}, dim_labels=" + labels + ", feature_group_count=" + std::to_string(groups) + "\n}\n";
}

// Instructions of core 0 tagged `name` (the convolution's kernel) with opcode `op`.
int64_t CountOps(const isa::Program& p, const std::string& name, isa::Opcode op) {
  int64_t n = 0;
  const auto& core = p.cores[0];
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const int32_t tag = core.hlo_tags[i];
    if (tag >= 0 && p.hlo_names[static_cast<size_t>(tag)] == name &&
        core.instructions[i].opcode == op) {
      ++n;
    }
  }
  return n;
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

// No im2col anywhere: no concatenate, slice or dot in the lowered module, and the convolution
// itself (`y`, or its canonical copy) kept.
void ExpectNoIm2col(const std::string& text, const std::string& config) {
  auto module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  CompileOptions o;
  o.dump_after = "lower-convolution";
  auto r = Compile(*module, testing::Config(config), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const char* op : {" concatenate(", " dot(", " slice("}) {
    EXPECT_EQ(r->dump.find(op), std::string::npos) << op << " in\n" << r->dump;
  }
  EXPECT_NE(r->dump.find(" convolution("), std::string::npos) << r->dump;
}

struct Case {
  const char *lhs, *rhs, *out, *window, *labels;
  int64_t groups;
};

// Depthwise convolutions and their relatives (cg = C / G below R / 8 on a 128-row MXU): the VPU
// form, no MXU instruction in the kernel, exact.
const Case kVpuCases[] = {
    // MobileNet's depthwise layers: stride 1 and stride 2 with TF's SAME padding 0_1.
    {"f32[2,9,11,16]", "f32[3,3,1,16]", "f32[2,9,11,16]", "size=3x3 pad=1_1x1_1",
     "b01f_01io->b01f", 16},
    {"bf16[1,10,10,32]", "bf16[3,3,1,32]", "bf16[1,5,5,32]", "size=3x3 stride=2x2 pad=0_1x0_1",
     "b01f_01io->b01f", 32},
    // Window (rhs) dilation; a depthwise multiplier of 3 (18 outputs from 6 features).
    {"f32[2,12,12,8]", "f32[3,3,1,8]", "f32[2,10,10,8]", "size=3x3 rhs_dilate=2x2 pad=1_1x1_1",
     "b01f_01io->b01f", 8},
    {"f32[1,7,7,6]", "f32[3,3,1,18]", "f32[1,7,7,18]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
     6},
    // The input gradient of a strided depthwise layer with multiplier 3, as JAX writes it: lhs
    // dilation, reversed window, 3 input features per group and 1 output.
    {"f32[1,8,8,12]", "f32[3,3,3,4]", "f32[1,15,15,4]",
     "size=3x3 pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x1", "b01f_01io->b01f", 4},
    // Other dim_labels (NCHW, OI kernel) and one spatial dimension.
    {"f32[2,8,9,9]", "f32[3,3,8,1]", "f32[2,8,9,9]", "size=3x3 pad=1_1x1_1", "bf01_01oi->bf01",
     8},
    {"bf16[2,20,8]", "bf16[5,1,8]", "bf16[2,8,8]", "size=5 stride=2", "b0f_0io->b0f", 8},
    // Small groups that are not depthwise: 4 features per group, 2 outputs each.
    {"f32[2,6,7,16]", "f32[3,3,4,8]", "f32[2,6,7,8]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
     4},
};

// Larger groups (cg >= R / 8): one direct convolution per group on the MXUs, exact.
const Case kMxuCases[] = {
    {"f32[1,8,8,64]", "f32[3,3,32,48]", "f32[1,8,8,48]", "size=3x3 pad=1_1x1_1",
     "b01f_01io->b01f", 2},
    {"bf16[2,9,9,128]", "bf16[3,3,32,64]", "bf16[2,5,5,64]", "size=3x3 stride=2x2 pad=1_1x1_1",
     "b01f_01io->b01f", 4},
    {"f32[1,8,8,64]", "f32[3,3,16,16]", "f32[1,8,8,16]", "size=3x3 pad=1_1x1_1 rhs_reversal=1x1",
     "b01f_01oi->b01f", 4},
    {"f32[2,9,11,64]", "f32[3,3,16,32]", "f32[2,17,19,32]",
     "size=3x3 pad=1_1x1_1 lhs_dilate=2x2 rhs_dilate=1x2", "b01f_01io->b01f", 4},
};

class GroupedConvolutionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GroupedConvolutionTest, SmallGroupsRunOnTheVpuExactly) {
  for (const Case& c : kVpuCases) {
    const std::string text = GroupedConv(c.lhs, c.rhs, c.out, c.window, c.labels, c.groups);
    auto run = CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
    ExpectNoIm2col(text, GetParam());
    const auto& p = run.compiled.program;
    EXPECT_EQ(CountOps(p, "y.direct", isa::Opcode::kMxuMatmul) +
                  CountOps(p, "y", isa::Opcode::kMxuMatmul),
              0)
        << c.lhs << " " << c.window;
    EXPECT_GT(CountOps(p, "y.direct", isa::Opcode::kVpuBinary) +
                  CountOps(p, "y", isa::Opcode::kVpuBinary),
              0)
        << c.lhs << " " << c.window;
  }
}

TEST_P(GroupedConvolutionTest, LargeGroupsRunAsDirectConvolutionsPerGroupExactly) {
  for (const Case& c : kMxuCases) {
    const std::string text = GroupedConv(c.lhs, c.rhs, c.out, c.window, c.labels, c.groups);
    auto run = CheckAgainstEvaluator(text, GetParam(), kExact, 0, {}, true);
    ExpectNoIm2col(text, GetParam());
    const auto& p = run.compiled.program;
    EXPECT_GT(CountOps(p, "y.direct", isa::Opcode::kMxuMatmul) +
                  CountOps(p, "y", isa::Opcode::kMxuMatmul),
              0)
        << c.lhs << " " << c.window;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, GroupedConvolutionTest, ::testing::Values("tpu-v3", "tpu-v4"));

// The form follows the features per group: below R / 8 the VPU, from R / 8 the MXU per group.
TEST(GroupedConvolutionFormTest, FeaturesPerGroupChooseTheUnit) {
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
  hlo::Window w;
  w.dimensions.resize(2);
  for (auto& d : w.dimensions) {
    d.size = 3;
    d.padding_low = d.padding_high = 1;
  }
  for (const int64_t cg : {1, 2, 15, 16, 32}) {
    const int64_t G = 4, C = G * cg;
    const std::vector<int64_t> lhs{1, 8, 8, C}, rhs{3, 3, cg, 2 * G}, out{1, 8, 8, 2 * G};
    const auto vpu = hlo::PlanVpuConvolution(lhs, rhs, out, w, dn, G, 1, 128);
    const auto mxu = hlo::PlanDirectConvolution(lhs, rhs, out, w, dn, G, 1, 128);
    EXPECT_EQ(vpu.has_value(), cg < 16) << cg;
    EXPECT_EQ(mxu.has_value(), cg >= 16) << cg;
    if (vpu) {
      EXPECT_EQ(vpu->G, G);
      EXPECT_EQ(vpu->cg, cg);
      EXPECT_EQ(vpu->og, 2);
      EXPECT_EQ(vpu->sW, C);
    }
    if (mxu) {
      EXPECT_EQ(mxu->groups, G);
      EXPECT_EQ(mxu->C, cg);
      EXPECT_EQ(mxu->O, 2);
      EXPECT_EQ(mxu->sW, C);
    }
  }
  // Batch groups (a depthwise filter gradient) take neither form.
  const std::vector<int64_t> lhs{4, 8, 8, 2}, rhs{3, 3, 2, 4}, out{1, 8, 8, 4};
  EXPECT_FALSE(hlo::PlanVpuConvolution(lhs, rhs, out, w, dn, 1, 4, 128));
  EXPECT_FALSE(hlo::PlanDirectConvolution(lhs, rhs, out, w, dn, 1, 4, 128));
}

// A MobileNet depthwise layer streams: the input is read from HBM about once (its halo rows
// aside), the kernel once, and the result written once.
TEST(GroupedConvolutionStreamingTest, DepthwiseInputReadAboutOnce) {
  auto module = testing::Parse(GroupedConv("bf16[1,150,150,32]", "bf16[3,3,1,32]",
                                           "bf16[1,150,150,32]", "size=3x3 pad=1_1x1_1",
                                           "b01f_01io->b01f", 32));
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.timing_only = true;
  auto compiled = Compile(*module, testing::Config("tpu-v4"), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const int64_t input = 150 * 150 * 32 * 2, kernel = 3 * 3 * 32 * 2;
  const int64_t read = HbmBytesRead(compiled->program, "y");
  EXPECT_GE(read, input + kernel);
  EXPECT_LE(read, input * 11 / 10 + kernel) << "halo overhead above 10 %";
  EXPECT_EQ(CountOps(compiled->program, "y", isa::Opcode::kMxuMatmul), 0);
}

}  // namespace
}  // namespace tpusim::compiler
