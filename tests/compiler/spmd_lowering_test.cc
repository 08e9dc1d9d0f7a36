// End to end: an unpartitioned module with sharding annotations -> Compile (whose pipeline runs
// spmd-partitioner) -> the ISA interpreter on num_partitions cores, each core fed its shard of the
// full-size arguments -> every core's outputs compared with its shard of the unpartitioned
// module's output on the evaluator. This is what `tpusim run X.hlo` does for such a module.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "compile_test_util.h"
#include "compiler/passes/spmd_check.h"
#include "compiler/passes/spmd_partitioner.h"

namespace tpusim::compiler {
namespace {

// Runs `file` on num_partitions cores of the interpreter and checks every core. With
// `local_slice` unset, Compile partitions the module itself (its pipeline's SpmdPartitioner);
// otherwise the module is partitioned here with that option and the partitioned module (whose
// ENTRY is named *_spmd, so the pipeline leaves it alone) is compiled.
void CheckOnCores(const std::string& file,
                  std::optional<SpmdPartitionerOptions::LocalSlice> local_slice = std::nullopt) {
  auto text = ReadFile("tests/data/hlo/spmd/" + file);
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto original = testing::Parse(*text);
  auto partitioned = testing::Parse(*text);
  ASSERT_NE(original, nullptr);
  ASSERT_NE(partitioned, nullptr);
  // The shardings of the partitioned parameters and result, as Compile's pipeline produces them.
  SpmdPartitionerOptions options;
  if (local_slice) options.local_slice = *local_slice;
  auto changed = SpmdPartitioner(options).Run(*partitioned);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  ASSERT_TRUE(*changed);
  const int64_t n = original->num_partitions();

  auto full_args = hlo::Evaluator::MakeRandomArguments(*original, 7);
  ASSERT_TRUE(full_args.ok()) << full_args.status().message();
  hlo::EvaluatorOptions eo;
  eo.tpu_default_precision = true;  // the MXU's bf16 operands, as the lowering computes
  auto full_out = hlo::Evaluator(eo).Evaluate(*original, *full_args);
  ASSERT_TRUE(full_out.ok()) << full_out.status().message();

  const config::ChipConfig chip = testing::Config("tpu-v4-8");
  auto compiled = Compile(local_slice ? *partitioned : *original, chip);
  ASSERT_TRUE(compiled.ok()) << "code " << static_cast<int>(compiled.status().code()) << ": "
                             << compiled.status().message();
  ASSERT_EQ(compiled->program.num_cores(), n);
  const isa::MemorySizes sizes = isa::MemorySizes::FromChipConfig(chip);
  ASSERT_TRUE(isa::Verify(compiled->program, sizes).ok());
  isa::Interpreter interp(sizes);
  ASSERT_TRUE(interp.Load(compiled->program).ok());
  std::vector<std::vector<hlo::Literal>> args;
  for (int64_t p = 0; p < n; ++p) {
    auto a = ShardArguments(*partitioned, *full_args, p);
    ASSERT_TRUE(a.ok()) << a.status().message();
    args.push_back(std::move(a).value());
  }
  for (const BufferPlacement& b : compiled->parameters) {
    const hlo::Literal* lit =
        &args.at(static_cast<size_t>(b.core)).at(static_cast<size_t>(b.parameter_number));
    for (int64_t i : b.tuple_index) lit = &lit->element(i);
    const std::string bytes = testing::DeviceBytes(*lit);
    ASSERT_TRUE(interp.hbm(b.core).Write(b.hbm_address, bytes.data(), bytes.size()).ok());
  }
  Status run = interp.Run();
  ASSERT_TRUE(run.ok()) << run.message();

  std::vector<hlo::Literal> want;
  for (int64_t p = 0; p < n; ++p) {
    auto w = ExpectedPartitionOutput(*partitioned, *full_out, p);
    ASSERT_TRUE(w.ok()) << w.status().message();
    want.push_back(std::move(w).value());
  }
  std::vector<int64_t> leaf_of_core(static_cast<size_t>(n), 0);
  int64_t compared = 0;
  for (const BufferPlacement& b : compiled->outputs) {
    std::string bytes(static_cast<size_t>(b.bytes), '\0');
    ASSERT_TRUE(interp.hbm(b.core).Read(b.hbm_address, bytes.data(), bytes.size()).ok());
    auto got = testing::LiteralFromDevice(b.shape, bytes);
    ASSERT_TRUE(got.ok());
    const int64_t leaf = leaf_of_core[static_cast<size_t>(b.core)]++;
    const auto leaves = want[static_cast<size_t>(b.core)].Leaves();
    ASSERT_LT(leaf, static_cast<int64_t>(leaves.size()));
    // Partial sums per core plus the all-reduce add in another order than one full dot.
    EXPECT_LE(testing::WorstError(*got, *leaves[static_cast<size_t>(leaf)], 1e-4, 1e-4), 1.0)
        << "core " << b.core << " output " << leaf;
    compared += got->element_count();
  }
  EXPECT_GT(compared, 0);
}

class SpmdLoweringTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SpmdLoweringTest, EveryCoreMatchesItsShardOfTheUnpartitionedResult) {
  CheckOnCores(GetParam());
}

// XLA's way of taking a piece locally (partition-id, offset tables, dynamic-slice) through the
// lowering; the default (static slices + select) is what the modules above use.
TEST(SpmdLoweringDynamicSliceTest, LocalPiecesWithDynamicSlice) {
  for (const char* file : {"reduce_sharded.hlo", "reshard.hlo"}) {
    SCOPED_TRACE(file);
    CheckOnCores(file, SpmdPartitionerOptions::LocalSlice::kDynamicSlice);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modules, SpmdLoweringTest,
    ::testing::Values("mlp_batch_sharded.hlo", "megatron_mlp.hlo", "reduce_sharded.hlo",
                      "mesh_2x2.hlo", "megatron_sequence_parallel.hlo",
                      "pt_linear_megatron_unpartitioned.hlo", "attention_heads.hlo", "reshard.hlo",
                      "slice_concat.hlo", "embedding_batch_sharded.hlo"),
    [](const auto& info) { return info.param.substr(0, info.param.find('.')); });

}  // namespace
}  // namespace tpusim::compiler
