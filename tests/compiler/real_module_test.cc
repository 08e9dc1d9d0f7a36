// The PyTorch/XLA MNIST MLP training step (LeNet-style 784-120-84-10 MLP, batch 32, one replica's
// program of an 8-way data-parallel run) compiled for tiny and tpu-v4 and run on the interpreter;
// every output (updated weights, gradients, activations, loss) is checked against the CPU
// evaluator.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "common/file_util.h"
#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

std::string MnistPath() {
  for (const char* p :
       {"tests/data/hlo/pt_mlp_train_dp8_sep.hlo", "../shared/hlo/real/pt_mlp_train_dp8_sep.hlo"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

class MnistTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MnistTest, CompilesRunsAndMatchesTheEvaluator) {
  const std::string path = MnistPath();
  if (path.empty()) GTEST_SKIP() << "pt_mlp_train_dp8_sep.hlo not found";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  // The dots are f32 at DEFAULT precision (bf16 operands on both sides); the rest is f32 VPU work.
  // The loss (log-softmax, sums over 320 and 784-long rows) adds in another order than the
  // evaluator: 1e-4 relative.
  auto run = testing::CheckAgainstEvaluator(*text, GetParam(), 1e-4, 1e-4);
  EXPECT_EQ(run.outputs.size(), 15u);
  EXPECT_GT(run.executed, 100u);
}

INSTANTIATE_TEST_SUITE_P(Configs, MnistTest, ::testing::Values("tiny", "tpu-v4"));

// More PyTorch/XLA training and optimizer steps (Apache-2.0; tests/data/hlo or ../shared/hlo/real):
// every output leaf vs the evaluator on tpu-v4.
class RealModuleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealModuleTest, MatchesTheEvaluator) {
  std::string path;
  for (const std::string dir : {"tests/data/hlo/", "../shared/hlo/real/"}) {
    if (std::filesystem::exists(dir + GetParam())) {
      path = dir + GetParam();
      break;
    }
  }
  if (path.empty()) GTEST_SKIP() << GetParam() << " not found";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  auto run = testing::CheckAgainstEvaluator(*text, "tpu-v4", 1e-4, 1e-4);
  EXPECT_FALSE(run.outputs.empty());
}

INSTANTIATE_TEST_SUITE_P(PyTorch, RealModuleTest,
                         ::testing::Values("pt_linear_fwd_bwd.hlo", "pt_linear_model_zero1.hlo",
                                           "pt_mini_mlp_train_single.hlo",
                                           "pt_mini_mlp_train_dp.hlo",
                                           "pt_bert_adamw_update_single.hlo",
                                           "pt_linear_module_adam.hlo"),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           return n;
                         });

}  // namespace
}  // namespace tpusim::compiler

namespace tpusim::compiler {
namespace {

// Runs `path` on `n` devices (replica d = core d) with per-device random arguments and checks
// device 0's outputs against the evaluator's lockstep multi-device run.
// `edit` rewrites the text first; `options` are the compile options (num_replicas is set to n).
void CheckReplicated(const std::string& path, int64_t n, const std::string& config, double tol,
                     const std::function<void(std::string&)>& edit = {},
                     CompileOptions options = {}) {
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  if (edit) edit(*text);
  auto module = testing::Parse(*text);
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<hlo::Literal>> args;
  for (int64_t d = 0; d < n; ++d) {
    auto a = hlo::Evaluator::MakeRandomArguments(*module, 11, d);
    ASSERT_TRUE(a.ok()) << a.status().message();
    args.push_back(std::move(a).value());
  }
  hlo::EvaluatorOptions eo;
  eo.tpu_default_precision = true;
  hlo::Evaluator ev(eo);
  auto want = ev.EvaluateReplicated(*module, n, 1, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  options.num_replicas = n;
  auto run = testing::CompileAndRun(*module, testing::Config(config), args, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->compiled.program.num_cores(), n);
  const auto leaves = (*want)[0].Leaves();
  ASSERT_EQ(leaves.size(), run->outputs.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_LE(testing::WorstError(run->outputs[i], *leaves[i], tol, tol), 1.0) << "leaf " << i;
  }
}

// JAX's MNIST pmap training step: 8 replicas (one per core of a v4-8 slice) with all-reduces of the
// gradients, calls of `where` helpers (inlined), is-finite. No licence: read from ../shared, never
// copied.
TEST(ReplicatedModuleTest, JaxMnistPmapOnEightCores) {
  const std::string path = "../shared/hlo/real/jax_mnist_pmap_train_step.hlo";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  CheckReplicated(path, 8, "tpu-v4-8", 1e-4);
}

// JAX's wave-equation stencil under pmap: 8192 trips of an outer loop (a collective-permute halo
// exchange) around 4 trips of an inner leapfrog loop, on f32[1032,1024] per device. Whole, it is an
// ISA loop of 8192 trips (too long to unroll) whose state buffers the body writes in place. Its
// values are checked with one outer trip of two steps, every loop an ISA loop (--unroll-budget 0).
// No licence: read from ../shared, never copied.
TEST(ReplicatedModuleTest, JaxWaveEquationPmapAsIsaLoops) {
  const std::string path = "../shared/hlo/real/jax_wave_equation_pmap.hlo";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  auto module = testing::Parse(*text);
  ASSERT_NE(module, nullptr);
  CompileOptions timing;
  timing.timing_only = true;
  auto compiled = Compile(*module, testing::Config("tpu-v4-8"), timing);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_EQ(compiled->program.num_cores(), 8);
  EXPECT_EQ(testing::LoopCounts(compiled->program), std::vector<uint64_t>{8192});
  CompileOptions isa_loops;
  isa_loops.max_unrolled_instructions = 0;
  CheckReplicated(
      path, 8, "tpu-v4-8", 1e-5,
      [](std::string& t) {
        t.replace(t.find("constant(8192)"), 14, "constant(1)");         // outer trips
        const std::string inner = "%constant.520 = s32[] constant(4)";  // leapfrog steps per trip
        t.replace(t.find(inner), inner.size(), "%constant.520 = s32[] constant(2)");
      },
      isa_loops);
}

// PyTorch/XLA Megatron-style tensor-parallel linear layer on 2 devices (all-gather over {0,1}; the
// dump has no replica_count, the device count comes from the replica groups).
TEST(ReplicatedModuleTest, PtSpmdLinearMegatronOnTwoCores) {
  const std::string path = "tests/data/hlo/pt_spmd_linear_megatron.hlo";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  CheckReplicated(path, 2, "tpu-v4", 1e-4);
}

}  // namespace
}  // namespace tpusim::compiler
