// hbm_plan.cc: a scatter or dynamic-update-slice whose operand nobody reads later updates it in
// place (its result shares the operand's HBM buffer, no copy), as XLA does for a donated KV cache;
// when the old value is still read or returned, the result gets its own buffer. Values are checked
// against the evaluator either way.
#include <gtest/gtest.h>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

constexpr char kAssign[] = R"(
assign { a = f32[] parameter(0)  ROOT b = f32[] parameter(1) }
)";

uint64_t ParameterAddress(const CompiledModule& c, int64_t n) {
  for (const BufferPlacement& p : c.parameters) {
    if (p.parameter_number == n) return p.hbm_address;
  }
  ADD_FAILURE() << "no parameter " << n;
  return 0;
}

TEST(InPlaceUpdateTest, KvCacheScatterWritesTheCacheBuffer) {
  testing::RunResult r = CheckAgainstEvaluator(std::string("HloModule kv\n") + kAssign + R"(
ENTRY e {
  cache = f32[16,4,8] parameter(0)
  pos = s32[1] parameter(1)
  upd = f32[1,4,8] parameter(2)
  ROOT s = f32[16,4,8] scatter(cache, pos, upd), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
}
)",
                                               "tiny", 0, 0);
  ASSERT_EQ(r.compiled.outputs.size(), 1u);
  EXPECT_EQ(r.compiled.outputs[0].hbm_address, ParameterAddress(r.compiled, 0));
}

TEST(InPlaceUpdateTest, DynamicUpdateSliceInPlace) {
  testing::RunResult r = CheckAgainstEvaluator(R"(
HloModule dus
ENTRY e {
  cache = f32[16,8] parameter(0)
  upd = f32[2,8] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT s = f32[16,8] dynamic-update-slice(cache, upd, i, z)
}
)",
                                               "tiny", 0, 0);
  ASSERT_EQ(r.compiled.outputs.size(), 1u);
  EXPECT_EQ(r.compiled.outputs[0].hbm_address, ParameterAddress(r.compiled, 0));
}

TEST(InPlaceUpdateTest, OldValueReadLaterOrReturnedGetsACopy) {
  // The old cache is reduced after the scatter: the scatter must not overwrite it.
  testing::RunResult later = CheckAgainstEvaluator(std::string("HloModule kv\n") + kAssign + R"(
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
ENTRY e {
  cache = f32[16,4,8] parameter(0)
  pos = s32[1] parameter(1)
  upd = f32[1,4,8] parameter(2)
  s = f32[16,4,8] scatter(cache, pos, upd), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
  zero = f32[] constant(0)
  old = f32[] reduce(cache, zero), dimensions={0,1,2}, to_apply=add
  ROOT t = (f32[16,4,8], f32[]) tuple(s, old)
}
)",
                                                   "tiny", 1e-5, 1e-5);
  ASSERT_EQ(later.compiled.outputs.size(), 2u);
  EXPECT_NE(later.compiled.outputs[0].hbm_address, ParameterAddress(later.compiled, 0));
  // The old cache is itself an output.
  testing::RunResult returned = CheckAgainstEvaluator(std::string("HloModule kv\n") + kAssign + R"(
ENTRY e {
  cache = f32[16,4,8] parameter(0)
  pos = s32[1] parameter(1)
  upd = f32[1,4,8] parameter(2)
  s = f32[16,4,8] scatter(cache, pos, upd), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
  ROOT t = (f32[16,4,8], f32[16,4,8]) tuple(s, cache)
}
)",
                                                      "tiny", 0, 0);
  ASSERT_EQ(returned.compiled.outputs.size(), 2u);
  EXPECT_NE(returned.compiled.outputs[0].hbm_address, ParameterAddress(returned.compiled, 0));
}

}  // namespace
}  // namespace tpusim::compiler
