// spmd-partitioner: rewrites of hand-written unpartitioned modules (tests/data/hlo/spmd/), each
// checked on the evaluator — every partition's output of the partitioned module must equal its
// shard of the unpartitioned module's output — plus the collectives inserted and bad input.
#include "compiler/passes/spmd_partitioner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/file_util.h"
#include "compiler/passes/spmd_check.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloModule;
using hlo::HloOpcode;
using LocalSlice = SpmdPartitionerOptions::LocalSlice;

std::unique_ptr<HloModule> ParseText(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

std::string Read(const std::string& path) {
  auto t = ReadFile(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : std::string();
}

std::map<HloOpcode, int> CountOpcodes(const HloModule& m) {
  std::map<HloOpcode, int> n;
  for (const auto& inst : m.entry_computation()->instructions()) ++n[inst->opcode()];
  return n;
}

const HloInstruction* Find(const HloModule& m, const std::string& name) {
  const HloInstruction* i = m.entry_computation()->FindInstruction(name);
  EXPECT_NE(i, nullptr) << name;
  return i;
}

struct Partitioned {
  std::unique_ptr<HloModule> original;
  std::unique_ptr<HloModule> partitioned;
  SpmdCheckResult check;
};

// Parses `text` twice, partitions the second copy, verifies it and checks it on the evaluator.
Partitioned PartitionAndCheck(const std::string& text,
                              LocalSlice local = LocalSlice::kSelectSlices) {
  Partitioned r;
  r.original = ParseText(text);
  r.partitioned = ParseText(text);
  if (!r.original || !r.partitioned) return r;
  SpmdPartitioner pass(SpmdPartitionerOptions{local});
  auto changed = pass.Run(*r.partitioned);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  if (!changed.ok()) return r;
  EXPECT_TRUE(*changed);
  Status v = hlo::VerifyModule(*r.partitioned);
  EXPECT_TRUE(v.ok()) << v.message() << "\n" << r.partitioned->ToString();
  auto c = CheckPartitionedModule(*r.original, *r.partitioned);
  EXPECT_TRUE(c.ok()) << c.status().message() << "\n" << r.partitioned->ToString();
  if (c.ok()) {
    r.check = *c;
    EXPECT_TRUE(c->passed()) << c->first_mismatch << " (" << c->mismatches << " of "
                             << c->elements_compared << ")\n"
                             << r.partitioned->ToString();
  }
  return r;
}

TEST(SpmdPartitionerTest, BatchShardedMlpNeedsNoCollective) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/mlp_batch_sharded.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllReduce] + n[HloOpcode::kAllGather], 0) << m.ToString();
  // Per-partition shapes: half the batch everywhere, the weights whole.
  EXPECT_EQ(Find(m, "x")->shape().ToString(false), "f32[4,16]");
  EXPECT_EQ(Find(m, "w1")->shape().ToString(false), "f32[16,32]");
  EXPECT_EQ(Find(m, "relu.2")->shape().ToString(false), "f32[4,32]");
  EXPECT_EQ(Find(m, "bias.1")->shape().ToString(false), "f32[4,32]");
  EXPECT_EQ(m.entry_computation()->root_instruction()->shape().ToString(false), "f32[4,4]");
  EXPECT_EQ(m.entry_computation()->name(), "main_spmd");
  EXPECT_EQ(r.check.partitions, 2);
  EXPECT_EQ(r.check.elements_compared, 2 * 4 * 4);
}

// XLA's own partitioning of a batch-split 3-layer net (PyTorch/XLA dump) has no collective either.
TEST(SpmdPartitionerTest, BatchShardedMatchesXlaDumpCollectiveCount) {
  const std::string path = "tests/data/hlo/pt_spmd_linear_batch_sharded.hlo";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto xla = ParseText(Read(path));
  ASSERT_NE(xla, nullptr);
  auto n = CountOpcodes(*xla);
  EXPECT_EQ(n[HloOpcode::kAllReduce] + n[HloOpcode::kAllGather], 0);
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/mlp_batch_sharded.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  auto ours = CountOpcodes(*r.partitioned);
  EXPECT_EQ(ours[HloOpcode::kAllReduce] + ours[HloOpcode::kAllGather], 0);
}

TEST(SpmdPartitionerTest, MegatronMlpHasOneAllReduce) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/megatron_mlp.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllReduce], 1) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kPartitionId], 0) << "nothing is sliced locally\n" << m.ToString();
  EXPECT_EQ(Find(m, "w1")->shape().ToString(false), "f32[16,32]");  // columns split
  EXPECT_EQ(Find(m, "w2")->shape().ToString(false), "f32[32,16]");  // rows split
  EXPECT_EQ(Find(m, "act")->shape().ToString(false), "f32[8,32]");
  EXPECT_EQ(Find(m, "dot.2")->shape().ToString(false), "f32[8,16]");  // partial sums
  for (const auto& inst : m.entry_computation()->instructions()) {
    if (inst->opcode() != HloOpcode::kAllReduce) continue;
    EXPECT_EQ(inst->operand(0)->name(), "dot.2");
    EXPECT_EQ(inst->replica_groups().ToString(), "{{0,1}}");
    EXPECT_TRUE(inst->use_global_device_ids());
    ASSERT_TRUE(inst->channel_id().has_value());
    EXPECT_EQ(*inst->channel_id(), 1);
    EXPECT_EQ(inst->to_apply()->root_instruction()->opcode(), HloOpcode::kAdd);
  }
  EXPECT_EQ(m.entry_computation()->root_instruction()->sharding()->ToString(), "{replicated}");
}

// A PyTorch/XLA-shaped Linear net with Megatron annotations (even sizes). XLA's partitioning of the
// same net with uneven sizes (pt_spmd_linear_megatron.hlo) keeps the same compute per partition —
// one dot and one multiply+reduce — but pads 5 features to 2 x 3 and all-gathers the weights; with
// even sizes only the reduce's partial sums need a collective.
TEST(SpmdPartitionerTest, PyTorchShapedMegatronNet) {
  Partitioned r =
      PartitionAndCheck(Read("tests/data/hlo/spmd/pt_linear_megatron_unpartitioned.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllReduce], 1) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kPartitionId], 0) << m.ToString();
  EXPECT_EQ(Find(m, "w1t")->shape().ToString(false), "f32[12,3]");
  EXPECT_EQ(Find(m, "w2v")->shape().ToString(false), "f32[3]");
  EXPECT_EQ(Find(m, "prod")->shape().ToString(false), "f32[8,3]");
  EXPECT_EQ(r.check.elements_compared, 2 * 8);
  const std::string path = "tests/data/hlo/pt_spmd_linear_megatron.hlo";
  if (!std::filesystem::exists(path)) return;
  auto xla = ParseText(Read(path));
  ASSERT_NE(xla, nullptr);
  auto x = CountOpcodes(*xla);
  EXPECT_EQ(n[HloOpcode::kDot], x[HloOpcode::kDot]);
  EXPECT_EQ(n[HloOpcode::kReduce], x[HloOpcode::kReduce]);
}

TEST(SpmdPartitionerTest, PartialSumsConsumedSplitAreReduceScattered) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/megatron_sequence_parallel.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kReduceScatter], 1) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kAllReduce], 0) << m.ToString();
  for (const auto& inst : m.entry_computation()->instructions()) {
    if (inst->opcode() != HloOpcode::kReduceScatter) continue;
    EXPECT_EQ(inst->shape().ToString(false), "f32[4,16]");
    EXPECT_EQ(inst->dimensions(), std::vector<int64_t>{0});
    EXPECT_EQ(inst->replica_groups().ToString(), "{{0,1}}");
  }
  EXPECT_EQ(Find(m, "bias.2")->shape().ToString(false), "f32[4,16]");
  EXPECT_EQ(r.check.elements_compared, 2 * 4 * 16);
}

TEST(SpmdPartitionerTest, ReduceOverSplitDimensionAllReduces) {
  for (LocalSlice local : {LocalSlice::kSelectSlices, LocalSlice::kDynamicSlice}) {
    Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/reduce_sharded.hlo"), local);
    ASSERT_NE(r.partitioned, nullptr);
    const HloModule& m = *r.partitioned;
    auto n = CountOpcodes(m);
    EXPECT_EQ(n[HloOpcode::kAllReduce], 1) << m.ToString();
    EXPECT_EQ(Find(m, "row_sum")->shape().ToString(false), "f32[8]");   // local partial sums
    EXPECT_EQ(Find(m, "col_max")->shape().ToString(false), "f32[16]");  // stays split
    EXPECT_EQ(Find(m, "scaled")->shape().ToString(false), "f32[4]");
    // The all-reduced row sums are sliced again for the split multiply.
    EXPECT_EQ(n[HloOpcode::kPartitionId], 1) << m.ToString();
    if (local == LocalSlice::kDynamicSlice) {
      EXPECT_EQ(n[HloOpcode::kDynamicSlice], 2) << m.ToString();  // offset table + the shard
      EXPECT_EQ(n[HloOpcode::kSelect], 0);
    } else {
      EXPECT_EQ(n[HloOpcode::kDynamicSlice], 0) << m.ToString();
      EXPECT_EQ(n[HloOpcode::kSlice], 2);
      EXPECT_EQ(n[HloOpcode::kSelect], 1);
    }
    EXPECT_EQ(r.check.elements_compared, 2 * (8 + 16 + 4));
  }
}

TEST(SpmdPartitionerTest, AttentionHeadsSplitWithoutCollectives) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/attention_heads.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllReduce] + n[HloOpcode::kAllGather] + n[HloOpcode::kReduceScatter], 0)
      << m.ToString();
  EXPECT_EQ(Find(m, "scores")->shape().ToString(false), "f32[2,2,8,8]");
  EXPECT_EQ(Find(m, "sum")->shape().ToString(false), "f32[2,2,8]");
  EXPECT_EQ(r.check.elements_compared, 2 * 2 * 2 * 8 * 16);
}

// Two replicas of a 2-way partitioned program: collectives name flattened device ids
// replica * num_partitions + partition, so each replica's partitions reduce among themselves.
TEST(SpmdPartitionerTest, ReplicasTimesPartitions) {
  std::string text = Read("tests/data/hlo/spmd/megatron_mlp.hlo");
  text.replace(text.find("num_partitions=2"), 16, "replica_count=2, num_partitions=2");
  Partitioned r = PartitionAndCheck(text);
  ASSERT_NE(r.partitioned, nullptr);
  for (const auto& inst : r.partitioned->entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kAllReduce) {
      EXPECT_EQ(inst->replica_groups().ToString(), "{{0,1},{2,3}}");
    }
  }
  EXPECT_EQ(r.check.replicas, 2);
  EXPECT_EQ(r.check.elements_compared, 4 * 8 * 16);
}

TEST(SpmdPartitionerTest, TwoByTwoMesh) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/mesh_2x2.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllReduce], 1) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
  EXPECT_EQ(Find(m, "x")->shape().ToString(false), "f32[4,16]");
  EXPECT_EQ(Find(m, "w1")->shape().ToString(false), "f32[16,16]");
  EXPECT_EQ(Find(m, "relu")->shape().ToString(false), "f32[4,16]");
  for (const auto& inst : m.entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kAllReduce) {
      EXPECT_EQ(inst->replica_groups().ToString(), "{{0,1},{2,3}}");  // within each data row
    }
  }
  EXPECT_EQ(r.check.partitions, 4);
  EXPECT_EQ(r.check.elements_compared, 4 * 4 * 16);
}

// A replicated output of a split value needs an all-gather; a column split consumed as a row
// split needs a gather then a local slice.
TEST(SpmdPartitionerTest, AllGatherWhereShardingsDisagree) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8,6], y: f32[8,6]) -> (f32[8,6], f32[8,6]) {
  %x = f32[8,6]{1,0} parameter(0), sharding={devices=[2,1]0,1}
  %y = f32[8,6]{1,0} parameter(1), sharding={devices=[1,2]0,1}
  %e = f32[8,6]{1,0} exponential(f32[8,6]{1,0} %x)
  %s = f32[8,6]{1,0} add(f32[8,6]{1,0} %e, f32[8,6]{1,0} %y), sharding={devices=[1,2]1,0}
  ROOT %t = (f32[8,6]{1,0}, f32[8,6]{1,0}) tuple(f32[8,6]{1,0} %e, f32[8,6]{1,0} %s), sharding={{replicated}, {devices=[1,2]1,0}}
}
)";
  for (LocalSlice local : {LocalSlice::kSelectSlices, LocalSlice::kDynamicSlice}) {
    Partitioned r = PartitionAndCheck(kText, local);
    ASSERT_NE(r.partitioned, nullptr);
    auto n = CountOpcodes(*r.partitioned);
    // e: gathered once (dim 0), reused by both users, then sliced for s; y: cut the same way as s
    // but on swapped partitions (device order 0,1 vs 1,0): a collective-permute swaps the pieces.
    EXPECT_EQ(n[HloOpcode::kAllGather], 1) << r.partitioned->ToString();
    EXPECT_EQ(n[HloOpcode::kCollectivePermute], 1) << r.partitioned->ToString();
    EXPECT_EQ(Find(*r.partitioned, "s")->shape().ToString(false), "f32[8,3]");
    EXPECT_EQ(r.check.elements_compared, 2 * (48 + 24));
  }
}

// Broadcast, transpose and reshape carry the split; unannotated values get it from users
// (backward) as well as operands (forward).
TEST(SpmdPartitionerTest, PropagatesThroughBroadcastTransposeReshape) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (a: f32[4,6], v: f32[6]) -> f32[12,2] {
  %a = f32[4,6]{1,0} parameter(0), sharding={devices=[2,1]0,1}
  %v = f32[6]{0} parameter(1)
  %t = f32[6,4]{1,0} transpose(f32[4,6]{1,0} %a), dimensions={1,0}
  %b = f32[6,4]{1,0} broadcast(f32[6]{0} %v), dimensions={0}
  %m = f32[6,4]{1,0} multiply(f32[6,4]{1,0} %t, f32[6,4]{1,0} %b)
  %rv = f32[6,4]{1,0} reverse(f32[6,4]{1,0} %m), dimensions={0}
  %r = f32[6,2,2]{2,1,0} reshape(f32[6,4]{1,0} %rv)
  ROOT %o = f32[12,2]{1,0} reshape(f32[6,2,2]{2,1,0} %r)
}
)";
  Partitioned r = PartitionAndCheck(kText);
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  EXPECT_EQ(Find(m, "t")->shape().ToString(false), "f32[6,2]");
  EXPECT_EQ(Find(m, "b")->shape().ToString(false), "f32[6,2]");
  EXPECT_EQ(Find(m, "rv")->shape().ToString(false), "f32[6,2]");  // reverses the uncut dimension
  EXPECT_EQ(Find(m, "r")->shape().ToString(false), "f32[6,1,2]");
  // The last reshape cannot keep the split of dimension 1 (it merges into dimension 0 behind a
  // whole dimension): the value is gathered and the output is replicated.
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllGather], 1) << m.ToString();
  EXPECT_EQ(m.entry_computation()->root_instruction()->shape().ToString(false), "f32[12,2]");
}

// custom-call "Sharding" (how JAX's with_sharding_constraint and PyTorch/XLA's mark_sharding
// appear in HLO) pins the cut of a value and is removed.
TEST(SpmdPartitionerTest, ShardingCustomCallIsAConstraint) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0)
  %e = f32[8,4]{1,0} exponential(f32[8,4]{1,0} %x)
  %c = f32[8,4]{1,0} custom-call(f32[8,4]{1,0} %e), custom_call_target="Sharding", sharding={devices=[2,1]0,1}
  ROOT %n = f32[8,4]{1,0} negate(f32[8,4]{1,0} %c)
}
)";
  auto m = ParseText(kText);
  ASSERT_NE(m, nullptr);
  auto changed = SpmdPartitioner().Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(hlo::VerifyModule(*m).ok());
  auto n = CountOpcodes(*m);
  EXPECT_EQ(n[HloOpcode::kCustomCall], 0) << m->ToString();
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m->ToString();
  EXPECT_EQ(Find(*m, "x")->shape().ToString(false), "f32[4,4]");  // split backward
  EXPECT_EQ(Find(*m, "n")->shape().ToString(false), "f32[4,4]");  // and forward
  EXPECT_EQ(Find(*m, "n")->operand(0)->name(), "e");
}

TEST(SpmdPartitionerTest, SliceConcatPadKeepUncutSplits) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/slice_concat.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllGather], 1) << m.ToString();  // only for the row slice
  EXPECT_EQ(Find(m, "q")->shape().ToString(false), "f32[4,16]");
  EXPECT_EQ(Find(m, "q")->slice_limits(), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(Find(m, "qk")->shape().ToString(false), "f32[4,32]");
  EXPECT_EQ(Find(m, "padded")->shape().ToString(false), "f32[4,36]");
  EXPECT_EQ(Find(m, "rows")->shape().ToString(false), "f32[3,48]");
  EXPECT_EQ(r.check.elements_compared, 2 * (4 * 36 + 3 * 48));
}

// A batch split over both axes of a 2x2 mesh stays a batch split through convolution, pooling
// and their gradients: the partitioned step is data parallelism (issue 17: MNIST's SPMD step ran
// every convolution on the whole batch on every core).
TEST(SpmdPartitionerTest, BatchSplitConvolutionNetIsDataParallel) {
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/conv_net_batch_sharded.hlo"),
                                    LocalSlice::kDynamicSlice);
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kDynamicSlice], 0) << "nothing is sliced locally\n" << m.ToString();
  EXPECT_EQ(n[HloOpcode::kAllReduce], 2) << m.ToString();  // the kernel gradient and the loss
  EXPECT_EQ(Find(m, "x")->shape().ToString(false), "f32[2,6,6,2]");
  EXPECT_EQ(Find(m, "conv")->shape().ToString(false), "f32[2,4,4,4]");
  EXPECT_EQ(Find(m, "pool")->shape().ToString(false), "f32[2,2,2,4]");
  EXPECT_EQ(Find(m, "dpool")->shape().ToString(false), "f32[2,4,4,4]");
  EXPECT_EQ(Find(m, "dx")->shape().ToString(false), "f32[2,6,6,2]");
  // The kernel gradient contracts the batch: each partition's partial sum, all-reduced over the
  // four partitions in the order the mesh lists them.
  const HloInstruction* dw = Find(m, "dw");
  EXPECT_EQ(dw->shape().ToString(false), "f32[3,3,2,4]");
  ASSERT_EQ(dw->users().size(), 1u);
  EXPECT_EQ(dw->users()[0]->opcode(), HloOpcode::kAllReduce);
  EXPECT_EQ(dw->users()[0]->replica_groups().ToString(), "{{0,2,1,3}}");
  EXPECT_EQ(r.check.partitions, 4);
}

// The other cuts of a convolution, as of a dot: the kernel's output feature (no collective), the
// input feature (partial sums, one all-reduce), a spatial dimension under a one-element window
// (kept); a windowed spatial dimension is gathered (its halo lives on the neighbour), and a
// grouped convolution keeps a batch split but not a feature split.
TEST(SpmdPartitionerTest, ConvolutionCutsLikeADot) {
  struct Case {
    const char* name;
    const char* x_sharding;
    const char* w_sharding;
    const char* window;  // and the kernel's spatial size
    int64_t feature_groups;
    const char* conv_shape;  // per partition
    int all_reduces;
    int all_gathers;
  };
  const Case cases[] = {
      {"output feature", "{replicated}", "{devices=[1,1,1,2]0,1}", "3x3", 1, "f32[4,4,4,3]", 0, 0},
      {"input feature", "{devices=[1,1,1,2]0,1}", "{devices=[1,1,2,1]0,1}", "3x3", 1,
       "f32[4,4,4,6]", 1, 0},
      {"1x1 spatial", "{devices=[1,2,1,1]0,1}", "{replicated}", "1x1", 1, "f32[4,3,6,6]", 0, 0},
      {"windowed spatial", "{devices=[1,2,1,1]0,1}", "{replicated}", "3x3", 1, "f32[4,4,4,6]", 0,
       1},
      {"grouped, batch", "{devices=[2,1,1,1]0,1}", "{replicated}", "3x3", 2, "f32[2,4,4,6]", 0, 0},
      {"grouped, feature", "{devices=[1,1,1,2]0,1}", "{replicated}", "3x3", 2, "f32[4,4,4,6]", 0,
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t k = c.window[0] - '0';
    const int64_t out = 6 - k + 1;
    const int64_t in_features = 4 / c.feature_groups;
    const std::string w_shape = fmt::format("f32[{},{},{},6]", k, k, in_features);
    const std::string out_shape = fmt::format("f32[4,{},{},6]", out, out);
    const std::string text = fmt::format(
        R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[4,6,6,4], w: {0}) -> {1} {{
  %x = f32[4,6,6,4]{{3,2,1,0}} parameter(0), sharding={2}
  %w = {0}{{3,2,1,0}} parameter(1), sharding={3}
  ROOT %conv = {1}{{3,2,1,0}} convolution(f32[4,6,6,4]{{3,2,1,0}} %x, {0}{{3,2,1,0}} %w), window={{size={4}}}, dim_labels=b01f_01io->b01f, feature_group_count={5}
}}
)",
        w_shape, out_shape, c.x_sharding, c.w_sharding, c.window, c.feature_groups);
    Partitioned r = PartitionAndCheck(text);
    ASSERT_NE(r.partitioned, nullptr);
    const HloModule& m = *r.partitioned;
    auto n = CountOpcodes(m);
    EXPECT_EQ(Find(m, "conv")->shape().ToString(false), c.conv_shape) << m.ToString();
    EXPECT_EQ(n[HloOpcode::kAllReduce], c.all_reduces) << m.ToString();
    EXPECT_EQ(n[HloOpcode::kAllGather], c.all_gathers) << m.ToString();
  }
}

// A weight gradient is larger than its batch-split operands: gathering them would move fewer
// bytes than the all-reduce of the partial sums, but every partition would then compute the whole
// gradient. Operands whose cuts agree are used as they are (XLA's dot handler), for a dot and a
// convolution alike.
TEST(SpmdPartitionerTest, WeightGradientLargerThanItsOperandsStaysSplit) {
  constexpr char kText[] = R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8,64], dy: f32[8,64], a: f32[8,4,4,32], g: f32[8,4,4,32]) -> (f32[64,64], f32[3,3,32,32]) {
  %x = f32[8,64]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %dy = f32[8,64]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %a = f32[8,4,4,32]{3,2,1,0} parameter(2), sharding={devices=[4,1,1,1]<=[4]}
  %g = f32[8,4,4,32]{3,2,1,0} parameter(3), sharding={devices=[4,1,1,1]<=[4]}
  %dw = f32[64,64]{1,0} dot(f32[8,64]{1,0} %x, f32[8,64]{1,0} %dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %dk = f32[3,3,32,32]{3,2,1,0} convolution(f32[8,4,4,32]{3,2,1,0} %a, f32[8,4,4,32]{3,2,1,0} %g), window={size=4x4 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ROOT %out = (f32[64,64]{1,0}, f32[3,3,32,32]{3,2,1,0}) tuple(f32[64,64]{1,0} %dw, f32[3,3,32,32]{3,2,1,0} %dk)
}
)";
  Partitioned r = PartitionAndCheck(kText);
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
  EXPECT_EQ(n[HloOpcode::kAllReduce], 2) << m.ToString();
  EXPECT_EQ(Find(m, "dw")->operand(0)->shape().ToString(false), "f32[2,64]");
  EXPECT_EQ(Find(m, "dk")->operand(0)->shape().ToString(false), "f32[2,4,4,32]");
  EXPECT_EQ(Find(m, "dk")->users()[0]->opcode(), HloOpcode::kAllReduce);
}

// A scan (an LSTM's, unrolled) reads time step t of a batch-split sequence with dynamic-slice and
// writes its output with dynamic-update-slice; both take the batch dimension whole, so it stays
// cut (its start index is clamped to 0 on every partition).
TEST(SpmdPartitionerTest, DynamicSliceOfAnUncutDimensionKeepsTheSplit) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (xs: f32[4,8,3], ys: f32[4,8,3], t: s32[]) -> f32[4,8,3] {
  %xs = f32[4,8,3]{2,1,0} parameter(0), sharding={devices=[1,2,1]0,1}
  %ys = f32[4,8,3]{2,1,0} parameter(1), sharding={devices=[1,2,1]0,1}
  %t = s32[] parameter(2)
  %z = s32[] constant(0)
  %x = f32[1,8,3]{2,1,0} dynamic-slice(f32[4,8,3]{2,1,0} %xs, s32[] %t, s32[] %z, s32[] %z), dynamic_slice_sizes={1,8,3}
  %h = f32[1,8,3]{2,1,0} tanh(f32[1,8,3]{2,1,0} %x)
  ROOT %out = f32[4,8,3]{2,1,0} dynamic-update-slice(f32[4,8,3]{2,1,0} %ys, f32[1,8,3]{2,1,0} %h, s32[] %t, s32[] %z, s32[] %z)
}
)";
  Partitioned r = PartitionAndCheck(kText);  // t: a random index, clamped as XLA clamps it
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
  EXPECT_EQ(Find(m, "x")->shape().ToString(false), "f32[1,4,3]");
  EXPECT_EQ(Find(m, "x")->dynamic_slice_sizes(), (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(Find(m, "out")->shape().ToString(false), "f32[4,4,3]");
  EXPECT_EQ(r.check.elements_compared, 2 * 4 * 4 * 3);
}

// An unrolled while loop carries its values through tuple(...) / get-tuple-element pairs, and
// JAX's threefry random bits end in a bitcast-convert: a split wanted after them reaches back to
// the bits' source, so each partition generates only its piece (MNIST's dropout mask).
TEST(SpmdPartitionerTest, SplitReachesBackThroughTuplesAndBitcastConvert) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8,4], k: u32[]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]0,1}
  %k = u32[] parameter(1)
  %io = u32[8]{0} iota(), iota_dimension=0
  %rows = u32[8,4]{1,0} broadcast(u32[8]{0} %io), dimensions={0}
  %kb = u32[8,4]{1,0} broadcast(u32[] %k), dimensions={}
  %bits = u32[8,4]{1,0} add(u32[8,4]{1,0} %rows, u32[8,4]{1,0} %kb)
  %carry = (u32[8,4]{1,0}, u32[]) tuple(u32[8,4]{1,0} %bits, u32[] %k)
  %next = u32[8,4]{1,0} get-tuple-element((u32[8,4]{1,0}, u32[]) %carry), index=0
  %mixed = u32[8,4]{1,0} multiply(u32[8,4]{1,0} %next, u32[8,4]{1,0} %next)
  %nine = u32[] constant(9)
  %nines = u32[8,4]{1,0} broadcast(u32[] %nine), dimensions={}
  %mant = u32[8,4]{1,0} shift-right-logical(u32[8,4]{1,0} %mixed, u32[8,4]{1,0} %nines)
  %one = u32[] constant(1065353216)
  %ones = u32[8,4]{1,0} broadcast(u32[] %one), dimensions={}
  %fbits = u32[8,4]{1,0} or(u32[8,4]{1,0} %mant, u32[8,4]{1,0} %ones)
  %f = f32[8,4]{1,0} bitcast-convert(u32[8,4]{1,0} %fbits)
  ROOT %y = f32[8,4]{1,0} multiply(f32[8,4]{1,0} %x, f32[8,4]{1,0} %f)
}
)";
  Partitioned r = PartitionAndCheck(kText);
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  EXPECT_EQ(Find(m, "f")->shape().ToString(false), "f32[4,4]");
  EXPECT_EQ(Find(m, "next")->shape().ToString(false), "u32[4,4]");
  EXPECT_EQ(Find(m, "bits")->shape().ToString(false), "u32[4,4]");
  EXPECT_EQ(Find(m, "rows")->shape().ToString(false), "u32[4,4]");
  auto n = CountOpcodes(m);
  EXPECT_EQ(n[HloOpcode::kAllGather], 0) << m.ToString();
}

int CollectiveCount(const HloModule& m) {
  auto n = CountOpcodes(m);
  return n[HloOpcode::kAllGather] + n[HloOpcode::kAllReduce] + n[HloOpcode::kReduceScatter] +
         n[HloOpcode::kCollectivePermute] + n[HloOpcode::kAllToAll];
}

// An embedding lookup of batch-split token ids: the table stays whole, each partition gathers the
// rows of its own ids into its piece of the result — no collective, no partition-id slicing (XLA's
// gather handler for cut index-passthrough dimensions). Before, the ids were all-gathered and every
// partition gathered the whole batch.
TEST(SpmdPartitionerTest, GatherWithBatchSplitIndicesNeedsNoCollective) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (table: f32[16,4], ids: s32[8,3], x: f32[8,3,4]) -> f32[8,3,4] {
  %table = f32[16,4]{1,0} parameter(0), sharding={replicated}
  %ids = s32[8,3]{1,0} parameter(1), sharding={devices=[2,1]0,1}
  %x = f32[8,3,4]{2,1,0} parameter(2), sharding={devices=[2,1,1]0,1}
  %ix = s32[8,3,1]{2,1,0} reshape(s32[8,3]{1,0} %ids)
  %rows = f32[8,3,4]{2,1,0} gather(f32[16,4]{1,0} %table, s32[8,3,1]{2,1,0} %ix), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,4}
  ROOT %y = f32[8,3,4]{2,1,0} add(f32[8,3,4]{2,1,0} %rows, f32[8,3,4]{2,1,0} %x)
}
)";
  Partitioned r = PartitionAndCheck(kText);  // random ids, clamped into the table as XLA does
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  EXPECT_EQ(CollectiveCount(m), 0) << m.ToString();
  EXPECT_EQ(CountOpcodes(m)[HloOpcode::kPartitionId], 0) << m.ToString();
  EXPECT_EQ(Find(m, "table")->shape().ToString(false), "f32[16,4]");
  EXPECT_EQ(Find(m, "ix")->shape().ToString(false), "s32[4,3,1]");
  EXPECT_EQ(Find(m, "rows")->shape().ToString(false), "f32[4,3,4]");
  EXPECT_EQ(Find(m, "rows")->gather_slice_sizes(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(r.check.elements_compared, 2 * 4 * 3 * 4);
}

// The embedding gradient of a data-parallel step: a scatter-add of batch-split token gradients
// into zeros. Each partition scatters its own rows into a whole zero table and one all-reduce sums
// the tables (XLA's scatter handler for cut index-passthrough dimensions); before, the updates were
// all-gathered and every partition scattered the whole batch. A scatter into a non-identity
// operand (here: the table itself) still runs whole.
TEST(SpmdPartitionerTest, ScatterAddOfBatchSplitUpdatesIsAllReduced) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %main (table: f32[16,4], ids: s32[8,3], g: f32[8,3,4]) -> (f32[16,4], f32[16,4]) {
  %table = f32[16,4]{1,0} parameter(0), sharding={replicated}
  %ids = s32[8,3]{1,0} parameter(1), sharding={devices=[2,1]0,1}
  %g = f32[8,3,4]{2,1,0} parameter(2), sharding={devices=[2,1,1]0,1}
  %ix = s32[8,3,1]{2,1,0} reshape(s32[8,3]{1,0} %ids)
  %zero = f32[] constant(0)
  %zeros = f32[16,4]{1,0} broadcast(f32[] %zero), dimensions={}
  %dtable = f32[16,4]{1,0} scatter(f32[16,4]{1,0} %zeros, s32[8,3,1]{2,1,0} %ix, f32[8,3,4]{2,1,0} %g), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=%add
  %new = f32[16,4]{1,0} add(f32[16,4]{1,0} %table, f32[16,4]{1,0} %dtable)
  %into = f32[16,4]{1,0} scatter(f32[16,4]{1,0} %table, s32[8,3,1]{2,1,0} %ix, f32[8,3,4]{2,1,0} %g), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=%add
  ROOT %out = (f32[16,4]{1,0}, f32[16,4]{1,0}) tuple(%new, %into)
}
)";
  Partitioned r = PartitionAndCheck(kText);  // random ids, clamped into the table as XLA does
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  EXPECT_EQ(Find(m, "dtable")->operand(1)->shape().ToString(false), "s32[4,3,1]") << m.ToString();
  EXPECT_EQ(Find(m, "dtable")->operand(2)->shape().ToString(false), "f32[4,3,4]");
  EXPECT_EQ(Find(m, "dtable")->shape().ToString(false), "f32[16,4]");
  // Whole: %into scatters every update into the table itself.
  EXPECT_EQ(Find(m, "into")->operand(2)->shape().ToString(false), "f32[8,3,4]");
  const auto n = CountOpcodes(m);
  EXPECT_EQ(n.count(HloOpcode::kAllReduce) ? n.at(HloOpcode::kAllReduce) : 0, 1) << m.ToString();
  EXPECT_GT(r.check.elements_compared, 0);
}

// The result's batch dimensions need not lead: a gather of columns (offset dimension 0) with its
// index vector implicit (index_vector_dim = rank of the indices) on a 2x2 mesh that cuts both
// index dimensions, and a split wanted only on the result reaches back to the indices.
TEST(SpmdPartitionerTest, GatherCutFollowsTheIndicesBatchDimensions) {
  constexpr char kText[] = R"(HloModule m, num_partitions=4
ENTRY %main (w: f32[5,16], ids: s32[4,6]) -> f32[5,4,6] {
  %w = f32[5,16]{1,0} parameter(0)
  %ids = s32[4,6]{1,0} parameter(1)
  %cols = f32[5,4,6]{2,1,0} gather(f32[5,16]{1,0} %w, s32[4,6]{1,0} %ids), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={5,1}
  ROOT %e = f32[5,4,6]{2,1,0} exponential(f32[5,4,6]{2,1,0} %cols), sharding={devices=[1,2,2]0,1,2,3}
}
)";
  Partitioned r = PartitionAndCheck(kText);
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  EXPECT_EQ(CollectiveCount(m), 0) << m.ToString();
  EXPECT_EQ(Find(m, "w")->shape().ToString(false), "f32[5,16]");
  EXPECT_EQ(Find(m, "ids")->shape().ToString(false), "s32[2,3]");
  EXPECT_EQ(Find(m, "ids")->sharding()->ToString(), "{devices=[2,2]0,1,2,3}");
  EXPECT_EQ(Find(m, "cols")->shape().ToString(false), "f32[5,2,3]");
  EXPECT_EQ(r.check.partitions, 4);
  EXPECT_EQ(r.check.elements_compared, 4 * 5 * 2 * 3);
}

// A table split by rows cannot be read locally by arbitrary ids: it is all-gathered once and the
// gather stays batch-split; a cut of the index vector dimension is gathered before the lookup.
TEST(SpmdPartitionerTest, GatherOperandAndIndexVectorCutsAreGathered) {
  constexpr char kText[] = R"(HloModule m, num_partitions=2
ENTRY %main (table: f32[8,3,2], ids: s32[4,2]) -> f32[4,2] {
  %table = f32[8,3,2]{2,1,0} parameter(0), sharding={devices=[2,1,1]0,1}
  %ids = s32[4,2]{1,0} parameter(1), sharding={devices=[1,2]0,1}
  %g = f32[4,2]{1,0} gather(f32[8,3,2]{2,1,0} %table, s32[4,2]{1,0} %ids), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1,2}
  ROOT %n = f32[4,2]{1,0} negate(f32[4,2]{1,0} %g), sharding={devices=[2,1]0,1}
}
)";
  Partitioned r = PartitionAndCheck(kText);
  ASSERT_NE(r.partitioned, nullptr);
  const HloModule& m = *r.partitioned;
  const HloInstruction* g = Find(m, "g");
  EXPECT_EQ(g->shape().ToString(false), "f32[2,2]");
  EXPECT_EQ(g->operand(0)->opcode(), HloOpcode::kAllGather) << m.ToString();
  EXPECT_EQ(g->operand(0)->shape().ToString(false), "f32[8,3,2]");
  EXPECT_EQ(g->operand(1)->shape().ToString(false), "s32[2,2]");
  EXPECT_EQ(r.check.elements_compared, 2 * 2 * 2);
}

TEST(SpmdPartitionerTest, LeavesReplicatedAndPartitionedModulesAlone) {
  constexpr char kReplicated[] = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), sharding={replicated}
  ROOT %n = f32[4]{0} negate(f32[4]{0} %x), sharding={maximal device=1}
}
)";
  auto m = ParseText(kReplicated);
  ASSERT_NE(m, nullptr);
  SpmdPartitioner pass;
  auto changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  // Running the pass on its own output changes nothing (the ENTRY is named *_spmd).
  Partitioned r = PartitionAndCheck(Read("tests/data/hlo/spmd/mlp_batch_sharded.hlo"));
  ASSERT_NE(r.partitioned, nullptr);
  auto again = ParseText(r.partitioned->ToString());
  ASSERT_NE(again, nullptr);
  auto changed2 = pass.Run(*again);
  ASSERT_TRUE(changed2.ok()) << changed2.status().message();
  EXPECT_FALSE(*changed2);
}

Status PartitionError(const std::string& sharding, const std::string& dims = "8,16",
                      int partitions = 2) {
  std::string text = "HloModule m, num_partitions=" + std::to_string(partitions) +
                     "\nENTRY %main (x: f32[" + dims + "]) -> f32[" + dims + "] {\n  %x = f32[" +
                     dims + "]{1,0} parameter(0)\n  ROOT %n = f32[" + dims + "]{1,0} negate(f32[" +
                     dims + "]{1,0} %x), sharding=" + sharding + "\n}\n";
  auto m = hlo::ParseHloModule(text, "bad.hlo");
  if (!m.ok()) return m.status();
  SpmdPartitioner pass;
  auto r = pass.Run(**m);
  return r.ok() ? OkStatus() : r.status();
}

TEST(SpmdPartitionerTest, UnsupportedSplitsAreLocatedErrors) {
  // A split inside a called computation.
  constexpr char kCalled[] = R"(HloModule m, num_partitions=2
%f (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(f32[4]{0} %a), sharding={devices=[2]0,1}
}
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %c = f32[4]{0} call(f32[4]{0} %x), to_apply=%f
}
)";
  auto m = hlo::ParseHloModule(kCalled, "called.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto r = SpmdPartitioner().Run(**m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("called.hlo:4:8: error: %n (negate) has "
                                      "sharding={devices=[2]0,1} in computation %f"),
            std::string::npos)
      << r.status().message();
  // A split element of a tuple fed to a while loop.
  constexpr char kWhile[] = R"(HloModule m, num_partitions=2
%cond (p: (f32[4], s32[])) -> pred[] {
  %p = (f32[4]{0}, s32[]) parameter(0)
  %i = s32[] get-tuple-element((f32[4]{0}, s32[]) %p), index=1
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(s32[] %i, s32[] %three), direction=LT
}
%body (b: (f32[4], s32[])) -> (f32[4], s32[]) {
  %b = (f32[4]{0}, s32[]) parameter(0)
  %v = f32[4]{0} get-tuple-element((f32[4]{0}, s32[]) %b), index=0
  %j = s32[] get-tuple-element((f32[4]{0}, s32[]) %b), index=1
  %one = s32[] constant(1)
  %j1 = s32[] add(s32[] %j, s32[] %one)
  %v2 = f32[4]{0} add(f32[4]{0} %v, f32[4]{0} %v)
  ROOT %t = (f32[4]{0}, s32[]) tuple(f32[4]{0} %v2, s32[] %j1)
}
ENTRY %main (x: f32[4]) -> (f32[4], s32[]) {
  %x = f32[4]{0} parameter(0), sharding={devices=[2]0,1}
  %zero = s32[] constant(0)
  %init = (f32[4]{0}, s32[]) tuple(f32[4]{0} %x, s32[] %zero)
  ROOT %w = (f32[4]{0}, s32[]) while((f32[4]{0}, s32[]) %init), condition=%cond, body=%body
}
)";
  auto w = hlo::ParseHloModule(kWhile, "while.hlo");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto wr = SpmdPartitioner().Run(**w);
  ASSERT_FALSE(wr.ok());
  EXPECT_EQ(wr.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(wr.status().message().find("while.hlo:21:8: error: %w (while): its tuple operand "
                                       "%init has element 0 split as {devices=[2]0,1}"),
            std::string::npos)
      << wr.status().message();
}

TEST(SpmdPartitionerTest, BadShardingsAreLocatedErrors) {
  Status s = PartitionError("{devices=[2,2]0,1,2,3}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.hlo:4:8: error: %n (negate): sharding {devices=[2,2]0,1,2,3} "
                             "is a mesh of 4 devices, but the module has num_partitions=2"),
            std::string::npos)
      << s.message();
  s = PartitionError("{devices=[2,1]0,0}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a permutation of 0..1 (device 0 appears twice)"),
            std::string::npos)
      << s.message();
  s = PartitionError("{devices=[2,1]0,2}");
  EXPECT_NE(s.message().find("device 2 is out of range"), std::string::npos) << s.message();
  s = PartitionError("{devices=[2,1]0,1}", "5,16");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("bad.hlo:4:8: error: %n (negate): sharding={devices=[2,1]0,1} cuts "
                             "dimension 0 of size 5 into 2 uneven tiles"),
            std::string::npos)
      << s.message();
  s = PartitionError("{manual}");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("bad.hlo:4:8"), std::string::npos) << s.message();
  s = PartitionError("{devices=[2]0,1}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has 1 tile assignment dimensions, but the array has rank 2"),
            std::string::npos)
      << s.message();
  s = PartitionError("{devices=[2,2]<=[4]}", "8,16", 4);
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace
}  // namespace tpusim::compiler
