// reverse (jnp.flip, torch.flip) is a GatherKernel with negative strides along its reversed
// dimensions (lower_data_movement.cc): each block's source box is loaded forwards and vpu.copy
// reverses it in VMEM. Every case is compared BIT FOR BIT with the evaluator: ranks 1 to 5, every
// kind of dimension subset (minor, major, all, alternating, with size-1 dimensions), every device
// element type, blocks that split the reversed dimensions (tiny's 1 MiB VMEM) and iterate leading
// reversed dimensions one index at a time, inside a fusion and feeding other kernels. A reverse of
// no dimension longer than 1 is its operand's buffer (no code), as XLA's algebraic simplifier
// replaces it by its operand.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpectSameBits;
using testing::InstructionsTagged;

struct ReverseCase {
  const char* name;
  const char* type;
  std::vector<int64_t> dims;
  std::vector<int64_t> reversed;
  const char* config;
};

std::string List(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// x -> reverse(x), returned beside x's negation through the reversed value (so the reverse's
// result is also read by another kernel, not only stored as the result).
std::string ReverseModule(const ReverseCase& c) {
  const std::string shape = std::string(c.type) + "[" + List(c.dims) + "]";
  return "HloModule rev\nENTRY e {\n  x = " + shape + " parameter(0)\n  r = " + shape +
         " reverse(x), dimensions={" + List(c.reversed) + "}\n  rr = " + shape +
         " reverse(r), dimensions={" + List(c.reversed) + "}\n  ROOT t = (" + shape + ", " +
         shape + ") tuple(r, rr)\n}\n";
}

const ReverseCase kCases[] = {
    {"rank1", "f32", {7}, {0}, "tiny"},
    {"minor", "f32", {5, 9}, {1}, "tiny"},
    {"major", "f32", {5, 9}, {0}, "tiny"},
    {"both", "f32", {5, 9}, {0, 1}, "tiny"},
    {"bf16_lanes", "bf16", {4, 6, 130}, {2}, "tiny"},
    {"bf16_outer_and_lanes", "bf16", {4, 6, 130}, {0, 2}, "tiny"},
    {"rank4_alternate", "f32", {3, 4, 5, 6}, {1, 3}, "tiny"},
    {"rank4_all", "f32", {3, 4, 5, 6}, {0, 1, 2, 3}, "tiny"},
    {"rank4_unordered_dims", "f32", {3, 4, 5, 6}, {3, 0}, "tiny"},
    // Five alternating levels: more than vpu.copy's three, one copy per outer index.
    {"rank5_alternate_even", "f32", {2, 3, 2, 3, 2}, {0, 2, 4}, "tiny"},
    {"rank5_alternate_odd", "s32", {2, 3, 2, 3, 2}, {1, 3}, "tiny"},
    {"size1_dims", "f32", {1, 8, 1, 3}, {0, 1, 2}, "tiny"},
    {"pred", "pred", {6, 10}, {0, 1}, "tiny"},
    {"s8", "s8", {33, 17}, {1}, "tiny"},
    {"u8", "u8", {33, 17}, {0}, "tiny"},
    {"s16", "s16", {8, 5, 4}, {0, 2}, "tiny"},
    {"u16", "u16", {8, 5, 4}, {1}, "tiny"},
    {"f16", "f16", {8, 5, 4}, {0, 1, 2}, "tiny"},
    {"u32", "u32", {128, 8}, {0}, "tiny"},
    {"s64", "s64", {9, 7}, {0, 1}, "tiny"},
    {"u64", "u64", {9, 7}, {1}, "tiny"},
    {"empty", "f32", {0, 4}, {0}, "tiny"},
    // 1.4 MiB on tiny's 1 MiB VMEM: blocks of rows, dimension 0 iterated one index at a time.
    {"blocked_leading", "f32", {3, 600, 200}, {0, 1}, "tiny"},
    {"blocked_lanes", "f32", {3, 600, 200}, {2}, "tiny"},
    {"blocked_all_bf16", "bf16", {64, 64, 96}, {0, 1, 2}, "tiny"},
    {"v4_all", "f32", {16, 256, 128}, {0, 1, 2}, "tpu-v4"},
    {"v4_major", "bf16", {16, 256, 128}, {0}, "tpu-v4"},
};

class ReverseTest : public ::testing::TestWithParam<ReverseCase> {};

TEST_P(ReverseTest, SameBitsAsTheEvaluator) {
  const ReverseCase& c = GetParam();
  ExpectSameBits(ReverseModule(c), c.config);
}

INSTANTIATE_TEST_SUITE_P(Cases, ReverseTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ReverseCase>& i) {
                           return std::string(i.param.name);
                         });

// The reversal is done in VMEM by vpu.copy (the DMA's strides are unsigned), one per index of the
// levels beyond its three: [2,3,2,3,2] reversed along {0,2,4} has five levels, 2 * 3 copies per
// block.
TEST(ReverseLoweringTest, ReversesInVmemWithVpuCopy) {
  auto run = ExpectSameBits(ReverseModule({"", "f32", {2, 3, 2, 3, 2}, {0, 2, 4}, "tiny"}));
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "r", isa::Opcode::kVpuCopy), 6);
  auto minor = ExpectSameBits(ReverseModule({"", "f32", {5, 9}, {1}, "tiny"}));
  EXPECT_EQ(InstructionsTagged(minor.compiled.program, "r", isa::Opcode::kVpuCopy), 1);
}

// No reversed dimension longer than 1 (or none at all): the operand's buffer, no code.
TEST(ReverseLoweringTest, ReverseOfUnitDimensionsIsItsOperand) {
  auto run = ExpectSameBits(R"(
HloModule rev
ENTRY e {
  x = f32[1,8,1] parameter(0)
  y = f32[4,4] parameter(1)
  a = f32[1,8,1] reverse(x), dimensions={0,2}
  b = f32[4,4] reverse(y), dimensions={}
  na = f32[1,8,1] negate(a)
  nb = f32[4,4] negate(b)
  ROOT t = (f32[1,8,1], f32[4,4]) tuple(na, nb)
}
)");
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "a"), 0);
  EXPECT_EQ(InstructionsTagged(run.compiled.program, "b"), 0);
}

// A reverse inside a fusion (an after-optimization dump) and one feeding a dot, a reduce and an
// elementwise chain; a reverse of a broadcast (its operand materialized) and of a slice view.
TEST(ReverseLoweringTest, InsideFusionsAndBetweenKernels) {
  ExpectSameBits(R"(
HloModule rev
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_flip {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  r = f32[8,16] reverse(p0), dimensions={1}
  m = f32[8,16] multiply(r, p1)
  ROOT rr = f32[8,16] reverse(m), dimensions={0}
}
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,24] parameter(1)
  v = f32[24] parameter(2)
  f = f32[8,16] fusion(x, x), kind=kLoop, calls=fused_flip
  fw = f32[16,24] reverse(w), dimensions={0,1}
  d = f32[8,24] dot(f, fw), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  rd = f32[8] reduce(d, z), dimensions={1}, to_apply=add
  rrd = f32[8] reverse(rd), dimensions={0}
  b = f32[8,24] broadcast(v), dimensions={1}
  rb = f32[8,24] reverse(b), dimensions={0,1}
  s = f32[8,24] add(rb, d)
  tail = f32[7,16] slice(x), slice={[1:8], [0:16]}
  rt = f32[7,16] reverse(tail), dimensions={0}
  e = f32[7,16] exponential(rt)
  ROOT t = (f32[8], f32[8,24], f32[7,16]) tuple(rrd, s, e)
}
)");
}

}  // namespace
}  // namespace tpusim::compiler
