// Replicas that lower to the same instructions share one copy of their code (compile.cc,
// isa::CoreList::Share): two cores share exactly when their code is equal, so a data-parallel
// module on N cores of chips with T TensorCores holds T copies (the cores of a chip use disjoint
// HBM ranges), and code that differs per replica is never shared.
#include <gtest/gtest.h>

#include <string>

#include "config/slice.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

constexpr char kDataParallel[] = R"(
HloModule dp, replica_count=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[16,128] parameter(0)
  w = f32[128,128] parameter(1)
  y = f32[16,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[16,128] all-reduce(y), replica_groups={}, to_apply=add
}
)";

// Each replica sends to its own neighbour: the pairs are one table for all, the code the same.
constexpr char kPermute[] = R"(
HloModule ring, replica_count=8
ENTRY main {
  x = f32[8,128] parameter(0)
  ROOT y = f32[8,128] collective-permute(x),
      source_target_pairs={{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,7},{7,0}}
}
)";

// Replica r reads only its own id's value: code that differs per replica only where it must.
constexpr char kReplicaId[] = R"(
HloModule rid, replica_count=8
ENTRY main {
  x = u32[8,128] parameter(0)
  id = u32[] replica-id()
  b = u32[8,128] broadcast(id), dimensions={}
  ROOT y = u32[8,128] add(x, b)
}
)";

// Compiles `text` for 8 replicas on a v4 slice (2 TensorCores per chip) and checks that two cores
// share a copy exactly when their code is equal; returns the number of copies.
size_t CopiesFor(const char* text) {
  auto module = testing::Parse(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return 0;
  std::string note;
  auto slice = config::SliceForCores(testing::Config("tpu-v4"), 8, &note);
  EXPECT_TRUE(slice.ok()) << slice.status().message();
  if (!slice.ok()) return 0;
  CompileOptions options;
  options.num_replicas = 8;
  auto compiled = Compile(*module, *slice, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status().message();
  if (!compiled.ok()) return 0;
  const isa::CoreList& cores = compiled->program.cores;
  EXPECT_EQ(cores.size(), 8u);
  for (size_t a = 0; a < cores.size(); ++a) {
    for (size_t b = 0; b < cores.size(); ++b) {
      EXPECT_EQ(cores.Shared(a, b), cores[a] == cores[b]) << "cores " << a << " and " << b;
    }
  }
  return cores.copies();
}

TEST(ReplicaSharingTest, DataParallelReplicasKeepOneCopyPerTensorCoreOfAChip) {
  EXPECT_EQ(CopiesFor(kDataParallel), 2u);
  EXPECT_EQ(CopiesFor(kPermute), 2u);
}

TEST(ReplicaSharingTest, CodeThatDiffersPerReplicaIsNotShared) {
  const size_t copies = CopiesFor(kReplicaId);
  EXPECT_GE(copies, 2u);
  EXPECT_LE(copies, 8u);
}

}  // namespace
}  // namespace tpusim::compiler
