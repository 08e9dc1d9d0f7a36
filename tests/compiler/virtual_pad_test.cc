// Virtual pads (lowerer.h IsVirtualPad): a rank-2 edge pad read only by elementwise ops is never
// materialized; its readers fill a block with the padding value and DMA the operand's rows into it.
// Checked against the evaluator on chunked and double-buffered kernels, through alias chains, and
// by the code: the pad emits no instructions.
#include <gtest/gtest.h>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::InstructionsTagged;

// jnp.pad-style shifts of a stencil (the wave equation's Laplacian): rows and columns padded on
// either side with a runtime value, through a zero-width pad, summed by a fused chain.
// 600x300 f32 operands: several chunks on tiny's 1 MiB of VMEM.
constexpr char kStencil[] = R"(
HloModule stencil
ENTRY e {
  x = f32[600,300] parameter(0)
  v = f32[] parameter(1)
  up = f32[599,300] slice(x), slice={[1:600], [0:300]}
  left = f32[600,299] slice(x), slice={[0:600], [1:300]}
  pu = f32[600,300] pad(up, v), padding=0_1x0_0
  z = f32[600,300] pad(pu, v), padding=0_0x0_0
  pl = f32[600,300] pad(left, v), padding=0_0x1_0
  both = f32[602,302] pad(x, v), padding=1_1x1_1
  s = f32[600,300] add(z, pl)
  f = f32[] constant(4)
  fb = f32[600,300] broadcast(f), dimensions={}
  m = f32[600,300] multiply(x, fb)
  lap = f32[600,300] subtract(s, m)
  nb = f32[602,302] negate(both)
  ROOT t = (f32[600,300], f32[602,302]) tuple(lap, nb)
}
)";

TEST(VirtualPadTest, StencilShiftsAreNeverMaterialized) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    auto run = CheckAgainstEvaluator(kStencil, config, 0, 0);
    for (const char* pad : {"pu", "z", "pl", "both"}) {
      EXPECT_EQ(InstructionsTagged(run.compiled.program, pad), 0) << pad << " on " << config;
    }
  }
}

// Without double buffering, and when the pad is also the result (then it is materialized).
TEST(VirtualPadTest, SingleBufferedAndMaterializedWhenReturned) {
  CompileOptions single;
  single.double_buffer = false;
  CheckAgainstEvaluator(kStencil, "tiny", 0, 0, single);
  auto run = CheckAgainstEvaluator(R"(
HloModule returned
ENTRY e {
  x = f32[6,5] parameter(0)
  v = f32[] parameter(1)
  p = f32[8,5] pad(x, v), padding=1_1x0_0
  n = f32[8,5] negate(p)
  ROOT t = (f32[8,5], f32[8,5]) tuple(p, n)
}
)",
                                   "tiny", 0, 0);
  EXPECT_GT(InstructionsTagged(run.compiled.program, "p"), 0);
}

}  // namespace
}  // namespace tpusim::compiler
