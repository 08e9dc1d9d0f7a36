// Copies that change the physical layout (hlo::CopyChangesLayout; XLA's "data formatting" in a
// dump taken after layout assignment) are kernels: the values move unchanged, each side's DMAs
// move its tile-padded bytes in its own layout — the bytes the TPU v3 profiles show for such a
// copy. A copy between equal layouts is removed (no instructions), as XLA's simplifier does.
#include <gtest/gtest.h>

#include <string>

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

TEST(LayoutCopyTest, ACopyBetweenEqualLayoutsIsRemoved) {
  auto run = CheckAgainstEvaluator(R"(
HloModule same_layout
ENTRY e {
  x = f32[6,40]{1,0:T(8,128)} parameter(0)
  n = f32[6,40]{1,0:T(8,128)} negate(x)
  c = f32[6,40]{1,0:T(8,128)} copy(n)
  ROOT a = f32[6,40]{1,0:T(8,128)} abs(c)
}
)",
                                   "tpu-v3", 0, 0);
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "c"), 0);
}

}  // namespace
}  // namespace tpusim::compiler
