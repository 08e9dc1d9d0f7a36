// XLA's "data formatting" ops are kernels: copies that change the physical layout
// (hlo::CopyChangesLayout), and in a dump taken after TPU layout assignment (tiled layouts) every
// copy and reshape outside fused computations (compiler/passes/data_formatting.h). The values move
// unchanged; each side's DMAs move its tile-padded bytes in its own layout — the bytes the TPU v3
// profiles show for such an op. A copy between equal untiled layouts (a dump taken before layout
// assignment) is removed, as XLA's simplifier does, and a reshape inside a fusion stays a view.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "compile_test_util.h"
#include "isa/footprint.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::InstructionsTagged;

// HBM bytes the DMAs tagged `name` read (hbm_to_vmem) and write (vmem_to_hbm) on core 0.
std::pair<uint64_t, uint64_t> HbmTraffic(const isa::Program& p, const std::string& name) {
  uint64_t read = 0, written = 0;
  const auto& core = p.cores[0];
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const int32_t tag = core.hlo_tags[i];
    if (tag < 0 || p.hlo_names[static_cast<size_t>(tag)] != name) continue;
    const isa::Instruction& inst = core.instructions[i];
    if (inst.opcode == isa::Opcode::kDmaHbmToVmem) read += isa::DmaHbmBytes(inst);
    if (inst.opcode == isa::Opcode::kDmaVmemToHbm) written += isa::DmaHbmBytes(inst);
  }
  return {read, written};
}

TEST(LayoutCopyTest, ALayoutChangingCopyMovesEachSidesTiledBytes) {
  // f32[6,40,3]: row-major {2,1,0} puts 3 on the lanes (T(8,128): 6 x 40 x 128 x 4 bytes); the
  // result's {1,0,2} puts 40 on the lanes and 6 on the sublanes (3 x 8 x 128 x 4 bytes).
  auto run = CheckAgainstEvaluator(R"(
HloModule data_formatting
ENTRY e {
  x = f32[6,40,3]{2,1,0:T(8,128)} parameter(0)
  n = f32[6,40,3]{2,1,0:T(8,128)} negate(x)
  c = f32[6,40,3]{1,0,2:T(8,128)} copy(n)
  ROOT a = f32[6,40,3]{1,0,2:T(8,128)} abs(c)
}
)",
                                   "tpu-v3", 0, 0);
  ASSERT_GT(InstructionsTagged(run.compiled.program, "c"), 0);
  const auto [read, written] = HbmTraffic(run.compiled.program, "c");
  EXPECT_EQ(read, 6u * 40 * 128 * 4);
  EXPECT_EQ(written, 3u * 8 * 128 * 4);
}

TEST(LayoutCopyTest, ACopyBetweenEqualUntiledLayoutsIsRemoved) {
  auto run = CheckAgainstEvaluator(R"(
HloModule same_layout
ENTRY e {
  x = f32[6,40]{1,0} parameter(0)
  n = f32[6,40]{1,0} negate(x)
  c = f32[6,40]{1,0} copy(n)
  ROOT a = f32[6,40]{1,0} abs(c)
}
)",
                                   "tpu-v3", 0, 0);
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "c"), 0);
}

// After TPU layout assignment: a copy between equal tiled layouts (copy insertion's) and a reshape
// between tile layouts are kernels of their own; the same reshape inside a fused computation is a
// view (no instructions of its own).
TEST(LayoutCopyTest, TopLevelCopiesAndReshapesOfATiledDumpAreKernels) {
  auto run = CheckAgainstEvaluator(R"(
HloModule after_layout_assignment
fused {
  q = f32[6,40]{1,0:T(8,128)} parameter(0)
  inner = f32[240]{0:T(256)} reshape(q)
  ROOT m = f32[240]{0:T(256)} negate(inner)
}
ENTRY e {
  x = f32[6,40]{1,0:T(8,128)} parameter(0)
  n = f32[6,40]{1,0:T(8,128)} negate(x)
  c = f32[6,40]{1,0:T(8,128)} copy(n)
  r = f32[240]{0:T(256)} reshape(c)
  f = f32[240]{0:T(256)} fusion(n), kind=kLoop, calls=fused
  ROOT t = (f32[240]{0:T(256)}, f32[240]{0:T(256)}) tuple(r, f)
}
)",
                                   "tpu-v3", 0, 0);
  EXPECT_GT(InstructionsTagged(run.compiled.program, "c"), 0);
  EXPECT_EQ(HbmTraffic(run.compiled.program, "c"), std::make_pair(uint64_t{8 * 128 * 4}, uint64_t{8 * 128 * 4}));
  EXPECT_GT(InstructionsTagged(run.compiled.program, "r"), 0);
  EXPECT_EQ(HbmTraffic(run.compiled.program, "r"), std::make_pair(uint64_t{8 * 128 * 4}, uint64_t{256 * 4}));
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "inner"), 0);
}

}  // namespace
}  // namespace tpusim::compiler
