// What the compiler says when it cannot compile a module: the op, its location and what is
// supported (Unimplemented), or the instruction and the sizes that do not fit (ResourceExhausted).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "compile_test_util.h"
#include "compiler/passes/lapack_custom_calls.h"

namespace tpusim::compiler {
namespace {

Status CompileText(const std::string& text, const std::string& config,
                   CompileOptions options = {}) {
  auto module = testing::Parse(text);
  if (!module) return Internal("parse failed");
  auto r = Compile(*module, testing::Config(config), options);
  return r.ok() ? OkStatus() : r.status();
}

CompileOptions TimingOnly() {
  CompileOptions o;
  o.timing_only = true;
  return o;
}

CompileOptions DumpAfter(const std::string& pass) {
  CompileOptions o;
  o.dump_after = pass;
  return o;
}

TEST(CompileErrorsTest, UnsupportedOpNamesItsLocationAndWhatATpuDoes) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  l = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  g = s32[2] parameter(2)
  ROOT r = f32[2,8,4] ragged-dot(l, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})",
                         "tiny");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("test.hlo:6:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("%r (ragged-dot)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("its ragged dimension is contracting"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("the form jax.lax.ragged_dot writes"), std::string::npos)
      << s.message();
}

TEST(CompileErrorsTest, UnknownCustomCallTarget) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(a), custom_call_target="MyFancyKernel"
})",
                         "tiny");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("MyFancyKernel"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("AwsNeuronTransferWithStaticRing"), std::string::npos);
}

// JAX's CPU LAPACK calls tpusim does not read: what the routine is, and either "lower for a TPU"
// (gtsv: JAX's TPU lowering of tridiagonal_solve is HLO tpusim runs) or "does not run on a TPU"
// (geev, gees: JAX has no TPU lowering); eig's complex result reaches complex-expander first.
TEST(CompileErrorsTest, UnreadCpuLapackCallsSayWhatToDo) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  dl = f32[8] parameter(0)
  b = f32[8,3] parameter(1)
  ROOT r = (f32[8,3], s32[]) custom-call(dl, dl, dl, b), custom_call_target="lapack_sgtsv_ffi"
})",
                         "tiny");
  EXPECT_NE(s.message().find("test.hlo:5:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("a tridiagonal solve"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("lowering_platforms=('tpu',)"), std::string::npos) << s.message();
  s = CompileText(R"(HloModule m
ENTRY e {
  a = f32[5,5] parameter(0)
  ROOT r = (c64[5], s32[]) custom-call(a), custom_call_target="lapack_sgeev_ffi"
})",
                  "tiny");
  EXPECT_NE(s.message().find("test.hlo:4:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("jnp.linalg.eig"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("does not run on a TPU"), std::string::npos) << s.message();
  EXPECT_NE(UnreadLapackCallNote("lapack_dgees_ffi").find("Schur"), std::string::npos);
  EXPECT_NE(UnreadLapackCallNote("lapack_sgehrd_ffi").find("does not read"), std::string::npos);
  EXPECT_EQ(UnreadLapackCallNote("MyFancyKernel"), "");
  EXPECT_EQ(UnreadLapackCallNote("lapack_"), "");
}

TEST(CompileErrorsTest, GpuLibraryCustomCallSaysWhereItComesFromAndTheRemedies) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  ROOT r = f32[4,4] custom-call(a, a), custom_call_target="__cublas$gemm",
    backend_config="{\"gemm_backend_config\":{\"alpha_real\":1}}"
})",
                         "tiny");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("__cublas$gemm\" is a call XLA's GPU backend writes"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("before_optimizations"), std::string::npos);
  EXPECT_NE(s.message().find("--custom-call-cost __cublas$gemm=CYCLES"), std::string::npos);
}

TEST(CompileErrorsTest, AnF64DotNamesTheOp) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  a = f64[4,4] parameter(0)
  ROOT r = f64[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                         "tiny");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("element type f64"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("test.hlo:4:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("%r (dot)"), std::string::npos) << s.message();
}

// XLA's rng_expander test writes rng(mean, stdev, shape): a third operand the expansion does not
// take. The error names the operand count and the result instead of calling it integer rng.
TEST(CompileErrorsTest, RngWithAThirdOperandSaysSo) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  mean = f32[] constant(0)
  stdev = f32[] constant(1)
  shape = u64[3] constant({8, 4, 2})
  ROOT result = f32[] rng(mean, stdev, shape), distribution=rng_normal
})",
                         "tiny");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("only with two scalar operands (a, b)"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("(this one: 3 operand(s), result f32[])"), std::string::npos)
      << s.message();
}

// rng_three_fry / rng_philox run as XLA expands them (rng-bit-generator-expander); a state or a
// bits type XLA's expansion does not take is refused at the instruction, naming the algorithm.
TEST(CompileErrorsTest, RngBitGeneratorStatesXlaDoesNotTakeAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"u64[3]", "(u64[3], u32[64]) rng-bit-generator(s), algorithm=rng_three_fry"},
      {"u64[2]", "(u64[2], s32[64]) rng-bit-generator(s), algorithm=rng_philox"}};
  for (const auto& [state, op] : cases) {
    Status s = CompileText("HloModule m\nENTRY e {\n  s = " + state + " parameter(0)\n  ROOT r = " +
                               op + "\n}",
                           "tiny");
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << op;
    EXPECT_NE(s.message().find("test.hlo:4:"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(op.substr(op.find("algorithm="))), std::string::npos)
        << s.message();
  }
  for (const char* algorithm : {"rng_default", "rng_three_fry", "rng_philox"}) {
    EXPECT_TRUE(CompileText(std::string("HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n"
                                        "  ROOT r = (u64[2], u32[64]) rng-bit-generator(s), "
                                        "algorithm=") +
                                algorithm + "\n}",
                            "tiny")
                    .ok())
        << algorithm;
  }
}

TEST(CompileErrorsTest, ReductionRowLargerThanVmemCompiles) {
  // One row of 400000 f32 (1.6 MB) does not fit tiny's 1 MiB of VMEM: it is reduced in chunks
  // (values: ReduceChunksTest).
  Status s = CompileText(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[2,400000] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add
})",
                         "tiny");
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CompileErrorsTest, BuffersLargerThanHbm) {
  // 2 x 64 MiB of parameters on tiny's 64 MiB HBM.
  Status s = CompileText(R"(HloModule m
ENTRY e {
  a = f32[4096,4096] parameter(0)
  b = f32[4096,4096] parameter(1)
  ROOT r = f32[4096,4096] add(a, b)
})",
                         "tiny", TimingOnly());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("HBM"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("chip.hbm.capacity_bytes = 67108864"), std::string::npos)
      << s.message();
}

TEST(CompileErrorsTest, UnknownDumpAfterPass) {
  Status s = CompileText(R"(HloModule m
ENTRY e {
  ROOT a = f32[4] parameter(0)
})",
                         "tiny", DumpAfter("tile-for-everything"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("canonicalize"), std::string::npos) << s.message();
}

TEST(CompileErrorsTest, DumpAfterCanonicalizeShowsTheRewrittenModule) {
  auto module = testing::Parse(R"(HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  w = f32[5,4] parameter(1)
  t = f32[4,5] transpose(w), dimensions={1,0}
  ROOT d = f32[6,5] dot(x, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  auto r = Compile(*module, testing::Config("tiny"), DumpAfter("canonicalize"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->dump.find("transpose"), std::string::npos) << r->dump;
  EXPECT_NE(r->dump.find("rhs_contracting_dims={1}"), std::string::npos) << r->dump;
}

}  // namespace
}  // namespace tpusim::compiler
