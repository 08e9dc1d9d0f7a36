// Every reduce kernel sums in the evaluator's order (lower_reduce.cc, docs/codegen.md "Reductions:
// one order"): each result starts at the init value and folds the reduced elements in row-major
// order, block after block (vpu.reduce acc=1), so `tpusim run`'s check of a reduction is exact.
// Before, a convolution's batch-norm sums fused into its epilogue were summed per output block and
// the blocks' partial sums added (ResNet-18's stem: 1 ulp in the mean, which flipped bf16 roundings
// of the next DEFAULT-precision convolution's operands; 0.11 after 4 stages); long rows were summed
// per chunk, bf16 rows rounded per chunk, and the init value was added last. Each module here runs
// on tiny (1 MiB of VMEM, 8x8 MXU: many blocks and chunks) and tpu-v4 and must match the reference
// bit for bit (tolerance 0).
#include <gtest/gtest.h>

#include <string>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

constexpr char kAdd[] = R"(
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}

max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

// A convolution and the batch-norm training arithmetic Flax writes (mean and mean of squares by
// reduce, then normalize): both sums join the convolution's pop-time epilogue.
const std::string kConvBatchNorm = std::string("HloModule conv_bn\n") + kAdd + R"(
ENTRY main {
  x = f32[2,32,32,8]{3,2,1,0} parameter(0)
  k = f32[3,3,8,32]{3,2,1,0} parameter(1)
  conv = f32[2,32,32,32]{3,2,1,0} convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  sum = f32[32]{0} reduce(conv, zero), dimensions={0,1,2}, to_apply=add_f32
  sq = f32[2,32,32,32]{3,2,1,0} multiply(conv, conv)
  sumsq = f32[32]{0} reduce(sq, zero), dimensions={0,1,2}, to_apply=add_f32
  n = f32[] constant(2048)
  nb = f32[32]{0} broadcast(n), dimensions={}
  mean = f32[32]{0} divide(sum, nb)
  meansq = f32[32]{0} divide(sumsq, nb)
  m2 = f32[32]{0} multiply(mean, mean)
  var = f32[32]{0} subtract(meansq, m2)
  mb = f32[2,32,32,32]{3,2,1,0} broadcast(mean), dimensions={3}
  cen = f32[2,32,32,32]{3,2,1,0} subtract(conv, mb)
  eps = f32[] constant(1e-05)
  epsb = f32[32]{0} broadcast(eps), dimensions={}
  ve = f32[32]{0} add(var, epsb)
  rs = f32[32]{0} rsqrt(ve)
  rsb = f32[2,32,32,32]{3,2,1,0} broadcast(rs), dimensions={3}
  y = f32[2,32,32,32]{3,2,1,0} multiply(cen, rsb)
  ROOT t = (f32[2,32,32,32]{3,2,1,0}, f32[32]{0}, f32[32]{0}) tuple(y, sum, sumsq)
}
)";

// A dot's row sums (over N blocks) and column sums (over M blocks) in its epilogue, with init
// values that are not the reducer's identity.
const std::string kDotReductions = std::string("HloModule dot_reduce\n") + kAdd + R"(
ENTRY main {
  a = f32[256,96]{1,0} parameter(0)
  w = f32[96,384]{1,0} parameter(1)
  d = f32[256,384]{1,0} dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  quarter = f32[] constant(0.25)
  rows = f32[256]{0} reduce(d, quarter), dimensions={1}, to_apply=add_f32
  m1 = f32[] constant(-1)
  cols = f32[384]{0} reduce(d, m1), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[256]{0}, f32[384]{0}) tuple(rows, cols)
}
)";

// Reduces of their own: over leading dimensions (down the sublanes), over the last (along the
// lanes), an input fusion's row sum, bf16 sums (f32 accumulation, one rounding) and a max.
const std::string kReduceKernels = std::string("HloModule reduce_kernels\n") + kAdd + R"(
ENTRY main {
  x = bf16[300,48]{1,0} parameter(0)
  i = bf16[] constant(0.3)
  lead = bf16[48]{0} reduce(x, i), dimensions={0}, to_apply=add_bf16
  last = bf16[300]{0} reduce(x, i), dimensions={1}, to_apply=add_bf16
  z = f32[16,100]{1,0} parameter(1)
  e = f32[16,100]{1,0} exponential(z)
  two = f32[] constant(2.1)
  rowsum = f32[16]{0} reduce(e, two), dimensions={1}, to_apply=add_f32
  u = f32[6,20,30]{2,1,0} parameter(2)
  mid = f32[20]{0} reduce(u, two), dimensions={0,2}, to_apply=add_f32
  big = f32[] constant(-3)
  mx = f32[6]{0} reduce(u, big), dimensions={1,2}, to_apply=max_f32
  ROOT t = (bf16[48]{0}, bf16[300]{0}, f32[16]{0}, f32[20]{0}, f32[6]{0}) tuple(lead, last, rowsum, mid, mx)
}
)";

// Rows longer than tiny's VMEM, reduced chunk by chunk (Lowerer::ReduceLongRows); a bf16 sum is
// kept in f32 across the chunks.
const std::string kLongRows = std::string("HloModule long_rows\n") + kAdd + R"(
ENTRY main {
  x = f32[3,300000]{1,0} parameter(0)
  i = f32[] constant(1.5)
  r = f32[3]{0} reduce(x, i), dimensions={1}, to_apply=add_f32
  y = bf16[2,600000]{1,0} parameter(1)
  j = bf16[] constant(0.75)
  s = bf16[2]{0} reduce(y, j), dimensions={1}, to_apply=add_bf16
  ROOT t = (f32[3]{0}, bf16[2]{0}) tuple(r, s)
}
)";

// Reduces that keep the minor dimension with reduced dimensions between kept ones (a 2x2 max pool
// written as reshape + reduce, a mean over a sequence, bf16 over leading dimensions) and one whose
// kept run is wider than tiny's VMEM holds beside its 300 reduced rows (blocks of the run).
const std::string kColumnReduces = std::string("HloModule column_reduces\n") + kAdd + R"(
max_s8 {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT m = s8[] maximum(a, b)
}

ENTRY main {
  p = s8[4,6,2,6,2,64]{5,4,3,2,1,0} parameter(0)
  lo = s8[] constant(-128)
  pool = s8[4,6,6,64]{3,2,1,0} reduce(p, lo), dimensions={2,4}, to_apply=max_s8
  x = f32[3,10,4,200]{3,2,1,0} parameter(1)
  i = f32[] constant(0.5)
  seq = f32[3,4,200]{2,1,0} reduce(x, i), dimensions={1}, to_apply=add_f32
  y = bf16[5,7,130]{2,1,0} parameter(2)
  j = bf16[] constant(0.3)
  lead = bf16[130]{0} reduce(y, j), dimensions={0,1}, to_apply=add_bf16
  w = f32[2,300,4096]{2,1,0} parameter(3)
  wide = f32[2,4096]{1,0} reduce(w, i), dimensions={1}, to_apply=add_f32
  ROOT t = (s8[4,6,6,64]{3,2,1,0}, f32[3,4,200]{2,1,0}, bf16[130]{0}, f32[2,4096]{1,0}) tuple(pool, seq, lead, wide)
}
)";

testing::RunResult CheckExactly(const std::string& text, const std::string& config) {
  return testing::CheckAgainstEvaluator(text, config, 0, 0, {}, /*mxu_order=*/true);
}

// vpu.reduce instructions of HLO instruction `name` (one per block or chunk it reduces).
int Reduces(const testing::RunResult& run, const std::string& name) {
  return testing::InstructionsTagged(run.compiled.program, name, isa::Opcode::kVpuReduce);
}

TEST(ReduceOrderTest, ConvolutionBatchNormStatisticsAreExact) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    SCOPED_TRACE(config);
    const auto run = CheckExactly(kConvBatchNorm, config);
    if (std::string(config) == "tiny") {
      // Both sums run on the convolution's popped blocks, block after block.
      EXPECT_GT(Reduces(run, "sum"), 1);
      EXPECT_GT(Reduces(run, "sumsq"), 1);
    }
  }
}

TEST(ReduceOrderTest, DotEpilogueRowAndColumnSumsAreExact) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    SCOPED_TRACE(config);
    const auto run = CheckExactly(kDotReductions, config);
    if (std::string(config) == "tiny") {
      EXPECT_GT(Reduces(run, "rows"), 1);
      EXPECT_GT(Reduces(run, "cols"), 1);
    }
  }
}

TEST(ReduceOrderTest, ReduceKernelsStartAtTheInitValue) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    SCOPED_TRACE(config);
    CheckExactly(kReduceKernels, config);
  }
}

TEST(ReduceOrderTest, LongRowsAreSummedInOneOrder) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    SCOPED_TRACE(config);
    const auto run = CheckExactly(kLongRows, config);
    if (std::string(config) == "tiny") {  // several chunks per row
      EXPECT_GT(Reduces(run, "r"), 3);
      EXPECT_GT(Reduces(run, "s"), 2);
    }
  }
}

// The kept minor elements stay on the lanes and the reduced ones go down the sublanes (XLA's
// column reduction), never a gather of one element per DMA run; same bits as the evaluator.
TEST(ReduceOrderTest, ReducesKeepingTheMinorDimensionGoDownTheSublanes) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    SCOPED_TRACE(config);
    const auto run = CheckExactly(kColumnReduces, config);
    const isa::Program& p = run.compiled.program;
    for (const char* name : {"pool", "seq", "lead", "wide"}) {
      SCOPED_TRACE(name);
      int sublanes = 0, reduces = 0;
      const auto& core = p.cores[0];
      for (size_t k = 0; k < core.instructions.size(); ++k) {
        const int32_t tag = core.hlo_tags[k];
        if (tag < 0 || p.hlo_names[static_cast<size_t>(tag)] != name ||
            core.instructions[k].opcode != isa::Opcode::kVpuReduce) {
          continue;
        }
        ++reduces;
        const auto axis = core.instructions[k].As<isa::op::VpuReduce>().axis;
        sublanes += axis == isa::ReduceAxis::kSublanes;
      }
      EXPECT_GT(reduces, 0);
      EXPECT_EQ(sublanes, reduces);
    }
    if (std::string(config) == "tiny") {
      EXPECT_GT(Reduces(run, "wide"), 2);  // blocks of the run
    }
  }
}

}  // namespace
}  // namespace tpusim::compiler
