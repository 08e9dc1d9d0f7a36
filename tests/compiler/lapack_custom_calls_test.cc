// lapack-custom-calls (issue 16): the LAPACK custom-calls JAX's CPU lowering emits for
// jnp.linalg.cholesky, solve_triangular and lu read as what they compute — the flags parsed
// (hlo::GetLapackCall), the evaluator's reading equal to the HLO op's bit for bit, the pass
// leaving no custom-call, getrf's unrolled steps equal to the evaluator's bit for bit, and
// compiled modules checked against the evaluator (failed factorizations' info included).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "compile_test_util.h"
#include "compiler/passes/lapack_custom_calls.h"
#include "hlo/computation.h"
#include "hlo/linalg_options.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::Parse;

TEST(LapackCallTest, FlagsAreReadAsLapackCharacters) {
  auto potrf = hlo::GetLapackCall("lapack_spotrf_ffi", "{uplo = 85 : ui8}", "c");
  ASSERT_TRUE(potrf.ok() && potrf->has_value());
  EXPECT_EQ((*potrf)->kind, hlo::LapackCall::Kind::kPotrf);
  EXPECT_FALSE((*potrf)->cholesky.lower);
  auto trsm = hlo::GetLapackCall(
      "lapack_strsm_ffi", "{diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}",
      "t");
  ASSERT_TRUE(trsm.ok() && trsm->has_value());
  const hlo::TriangularSolveOptions& o = (*trsm)->solve;
  EXPECT_FALSE(o.left_side);
  EXPECT_TRUE(o.lower);
  EXPECT_TRUE(o.unit_diagonal);
  EXPECT_EQ(o.transpose_a, hlo::TriangularSolveTranspose::kTranspose);
  auto lu = hlo::GetLapackCall("lapack_sgetrf_ffi", "{}", "lu");
  ASSERT_TRUE(lu.ok() && lu->has_value());
  EXPECT_EQ((*lu)->kind, hlo::LapackCall::Kind::kGetrf);
  auto qr = hlo::GetLapackCall("lapack_sgeqrf_ffi", "{}", "qr");
  ASSERT_TRUE(qr.ok() && qr->has_value());
  EXPECT_EQ((*qr)->kind, hlo::LapackCall::Kind::kGeqrf);
  auto svd = hlo::GetLapackCall("lapack_sgesdd_ffi", "{mode = 83 : ui8}", "svd");
  ASSERT_TRUE(svd.ok() && svd->has_value());
  EXPECT_EQ((*svd)->kind, hlo::LapackCall::Kind::kGesdd);
  EXPECT_FALSE((*svd)->full_matrices);
  EXPECT_TRUE((*svd)->compute_uv);
  auto other = hlo::GetLapackCall("lapack_sgeev_ffi", "{}", "eig");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());  // not one of them: left to the unknown-target error
  auto bad = hlo::GetLapackCall("lapack_strsm_ffi", "{side = 76 : ui8, uplo = 88 : ui8}", "t");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("uplo = 88"), std::string::npos) << bad.status().message();
  auto missing = hlo::GetLapackCall("lapack_spotrf_ffi", "{}", "c");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no `uplo`"), std::string::npos);
}

// The same computation twice: as JAX's CPU lowering writes it (custom-calls) and as the HLO ops.
// s = p p^T + 4 I per batch element; potrf(s) with `uplo`, then trsm(factor, b) with the flags.
std::string LapackModule(bool ops, char uplo, char side, char trans, char diag) {
  const bool lower = uplo == 'L', left = side == 'L';
  const std::string b = left ? "f32[2,6,3]" : "f32[2,3,6]";
  const std::string tr = trans == 'N' ? "NO_TRANSPOSE" : trans == 'T' ? "TRANSPOSE" : "ADJOINT";
  const std::string chol =
      ops ? fmt::format("  l = f32[2,6,6] cholesky(s), lower={}\n  info = s32[2] constant({{0, 0}})",
                        lower)
          : fmt::format(
                "  c = (f32[2,6,6], s32[2]) custom-call(s), custom_call_target=\"lapack_spotrf_ffi\","
                " backend_config={{uplo = {} : ui8}}\n"
                "  l = f32[2,6,6] get-tuple-element(c), index=0\n"
                "  info = s32[2] get-tuple-element(c), index=1",
                static_cast<int>(uplo));
  const std::string solve =
      ops ? fmt::format("  ROOT x = {} triangular-solve(l, q), left_side={}, lower={}, "
                        "unit_diagonal={}, transpose_a={}",
                        b, left, lower, diag == 'U', tr)
          : fmt::format("  ROOT x = {} custom-call(l, q), custom_call_target=\"lapack_strsm_ffi\", "
                        "backend_config={{diag = {} : ui8, side = {} : ui8, trans_x = {} : ui8, "
                        "uplo = {} : ui8}}",
                        b, static_cast<int>(diag), static_cast<int>(side),
                        static_cast<int>(trans), static_cast<int>(uplo));
  return fmt::format(R"(HloModule lapack
ENTRY e {{
  p = f32[2,6,6] parameter(0)
  q = {0} parameter(1)
  pt = f32[2,6,6] transpose(p), dimensions={{0,2,1}}
  pp = f32[2,6,6] dot(p, pt), lhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_batch_dims={{0}}, rhs_contracting_dims={{1}}, operand_precision={{highest,highest}}
  r = s32[2,6,6] iota(), iota_dimension=1
  k = s32[2,6,6] iota(), iota_dimension=2
  eye = pred[2,6,6] compare(r, k), direction=EQ
  four = f32[] constant(4)
  fours = f32[2,6,6] broadcast(four), dimensions={{}}
  z0 = f32[] constant(0)
  z = f32[2,6,6] broadcast(z0), dimensions={{}}
  d = f32[2,6,6] select(eye, fours, z)
  s = f32[2,6,6] add(pp, d)
{1}
{2}
}}
)",
                     b, chol, solve);
}

// testing::WorstError (exact: atol = rtol = 0) over every leaf of a tuple; WorstError itself
// compares arrays (a tuple has no elements of its own, so it compared nothing).
double WorstLeafError(const hlo::Literal& got, const hlo::Literal& want) {
  if (!want.IsTuple()) return testing::WorstError(got, want, 0, 0);
  EXPECT_EQ(got.tuple_size(), want.tuple_size());
  double worst = 0;
  for (int64_t i = 0; i < std::min(got.tuple_size(), want.tuple_size()); ++i) {
    worst = std::max(worst, WorstLeafError(got.element(i), want.element(i)));
  }
  return worst;
}

class LapackFlagsTest
    : public ::testing::TestWithParam<std::tuple<char, char, char, char>> {};

TEST_P(LapackFlagsTest, EvaluatorReadsTheCallsAsTheOps) {
  const auto [uplo, side, trans, diag] = GetParam();
  auto calls = Parse(LapackModule(false, uplo, side, trans, diag));
  auto ops = Parse(LapackModule(true, uplo, side, trans, diag));
  ASSERT_NE(calls, nullptr);
  ASSERT_NE(ops, nullptr);
  auto args = hlo::Evaluator::MakeRandomArguments(*ops, 3);
  ASSERT_TRUE(args.ok());
  hlo::Evaluator ev;
  auto want = ev.Evaluate(*ops, *args);
  auto got = ev.Evaluate(*calls, *args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(WorstLeafError(*got, *want), 0);

  ASSERT_TRUE(LapackCustomCalls().Run(*calls).ok());
  for (const auto& comp : calls->computations()) {
    for (const auto& i : comp->instructions()) {
      EXPECT_NE(i->opcode(), hlo::HloOpcode::kCustomCall) << i->name();
    }
  }
  auto rewritten = ev.Evaluate(*calls, *args);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().message();
  EXPECT_EQ(testing::WorstError(*rewritten, *want, 0, 0), 0);
}

INSTANTIATE_TEST_SUITE_P(Flags, LapackFlagsTest,
                         ::testing::Values(std::make_tuple('L', 'L', 'N', 'N'),
                                           std::make_tuple('L', 'L', 'T', 'N'),
                                           std::make_tuple('U', 'L', 'C', 'U'),
                                           std::make_tuple('L', 'R', 'N', 'U'),
                                           std::make_tuple('U', 'R', 'T', 'N')));

TEST(LapackCompileTest, CompiledCallsMatchTheEvaluator) {
  CheckAgainstEvaluator(LapackModule(false, 'L', 'L', 'N', 'N'), "tiny", 1e-4, 1e-3);
  CheckAgainstEvaluator(LapackModule(false, 'U', 'R', 'T', 'U'), "tpu-v4", 1e-4, 1e-3);
}

// A matrix that is not positive definite: LAPACK reports info > 0 and JAX turns the factor into
// NaNs; here info is 1 (the factor is all NaN), in the evaluator and in the compiled program.
TEST(LapackCompileTest, FailedFactorizationReportsInfo) {
  const std::string text = R"(HloModule notpd
ENTRY e {
  a = f32[2,2,2] constant({{{4, 2}, {2, 3}}, {{1, 2}, {2, 1}}})
  c = (f32[2,2,2], s32[2]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 76 : ui8}
  ROOT info = s32[2] get-tuple-element(c), index=1
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->data<int32_t>()[0], 0);
  EXPECT_EQ(r->data<int32_t>()[1], 1);
  CheckAgainstEvaluator(text, "tiny", 0, 0);
}

// getrf of an f32 operand [batch..., m, n]; `batch` as written in a shape ("" or "2," or "2,2,").
std::string GetrfModule(const std::string& batch, int64_t m, int64_t n) {
  return fmt::format(R"(HloModule getrf
ENTRY e {{
  a = f32[{0}{1},{2}] parameter(0)
  ROOT lu = (f32[{0}{1},{2}], s32[{0}{3}], s32[{4}]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", backend_config={{}}
}}
)",
                     batch, m, n, std::min(m, n), batch.empty() ? "" : batch.substr(0, batch.size() - 1));
}

// LAPACK's partial pivoting on a known case: [[1, 2], [3, 4]] takes row 1 first.
TEST(LapackGetrfTest, KnownAnswer) {
  auto m = Parse(R"(HloModule known
ENTRY e {
  a = f32[2,2] constant({{1, 2}, {3, 4}})
  ROOT lu = (f32[2,2], s32[2], s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", backend_config={}
}
)");
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const float* lu = r->element(0).data<float>();
  EXPECT_EQ(lu[0], 3.0f);
  EXPECT_EQ(lu[1], 4.0f);
  EXPECT_EQ(lu[2], 1.0f / 3.0f);
  EXPECT_EQ(lu[3], 2.0f - (1.0f / 3.0f) * 4.0f);
  EXPECT_EQ(r->element(1).data<int32_t>()[0], 2);  // 1-based: row 2 swapped into row 1
  EXPECT_EQ(r->element(1).data<int32_t>()[1], 2);
  EXPECT_EQ(r->element(2).data<int32_t>()[0], 0);
}

// The pass's unrolled steps give the evaluator's bits: square, tall and wide, batched, and a
// singular matrix (info = the first zero pivot, 1-based).
TEST(LapackGetrfTest, ExpansionMatchesTheEvaluatorBitForBit) {
  for (const auto& [batch, m, n] : {std::make_tuple("", 6, 6), std::make_tuple("2,", 5, 3),
                                    std::make_tuple("", 3, 4), std::make_tuple("2,2,", 4, 4)}) {
    SCOPED_TRACE(fmt::format("[{}{},{}]", batch, m, n));
    auto calls = Parse(GetrfModule(batch, m, n));
    ASSERT_NE(calls, nullptr);
    auto args = hlo::Evaluator::MakeRandomArguments(*calls, 11);
    ASSERT_TRUE(args.ok());
    hlo::Evaluator ev;
    auto want = ev.Evaluate(*calls, *args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ASSERT_TRUE(LapackCustomCalls().Run(*calls).ok());
    auto got = ev.Evaluate(*calls, *args);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(WorstLeafError(*got, *want), 0);
  }
  CheckAgainstEvaluator(GetrfModule("2,", 5, 5), "tiny", 0, 0);
  CheckAgainstEvaluator(GetrfModule("", 6, 4), "tpu-v4", 0, 0);
  const std::string singular = R"(HloModule singular
ENTRY e {
  a = f32[3,3] constant({{1, 2, 3}, {2, 4, 6}, {1, 1, 1}})
  ROOT lu = (f32[3,3], s32[3], s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", backend_config={}
}
)";
  auto m = Parse(singular);
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->element(2).data<int32_t>()[0], 3);  // U(3,3) == 0 after two steps
  CheckAgainstEvaluator(singular, "tiny", 0, 0);
}

// The TPU's LuDecomposition (JAX's lu lowered for a TPU): 0-based pivots and the permutation
// with a[perm] = l * u. a = [[0, 1, 0], [0, 0, 2], [3, 0, 0]]: step 0 takes row 2 (|3|), step 1
// row 2 again (|1| against 0), step 2 stays; perm = [0,1,2] -> [2,1,0] -> [2,0,1]; a[perm] is
// already upper triangular, so l = I and lu = [[3, 0, 0], [0, 1, 0], [0, 0, 2]].
std::string TpuLuModule(const std::string& batch, int64_t m, int64_t n) {
  const std::string b = batch.empty() ? "" : batch.substr(0, batch.size() - 1) + ",";
  return fmt::format(R"(HloModule tpu_lu
ENTRY e {{
  a = f32[{0}{1},{2}] parameter(0)
  ROOT lu = (f32[{0}{1},{2}], s32[{0}{3}], s32[{0}{1}]) custom-call(a), custom_call_target="LuDecomposition", api_version=API_VERSION_STATUS_RETURNING
}}
)",
                     b, m, n, std::min(m, n));
}

TEST(LuDecompositionTest, KnownAnswerWithZeroBasedPivotsAndPermutation) {
  const std::string text = R"(HloModule known
ENTRY e {
  a = f32[3,3] constant({{0, 1, 0}, {0, 0, 2}, {3, 0, 0}})
  ROOT lu = (f32[3,3], s32[3], s32[3]) custom-call(a), custom_call_target="LuDecomposition"
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const float* lu = r->element(0).data<float>();
  EXPECT_EQ(std::vector<float>(lu, lu + 9), (std::vector<float>{3, 0, 0, 0, 1, 0, 0, 0, 2}));
  const int32_t* piv = r->element(1).data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(piv, piv + 3), (std::vector<int32_t>{2, 2, 2}));
  const int32_t* perm = r->element(2).data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(perm, perm + 3), (std::vector<int32_t>{2, 0, 1}));
  CheckAgainstEvaluator(text, "tiny", 0, 0);
}

TEST(LuDecompositionTest, ExpansionMatchesTheEvaluatorBitForBit) {
  for (const auto& [batch, m, n] : {std::make_tuple("", 6, 6), std::make_tuple("2,", 5, 3),
                                    std::make_tuple("", 3, 4)}) {
    SCOPED_TRACE(fmt::format("[{}{},{}]", batch, m, n));
    auto calls = Parse(TpuLuModule(batch, m, n));
    ASSERT_NE(calls, nullptr);
    auto args = hlo::Evaluator::MakeRandomArguments(*calls, 5);
    ASSERT_TRUE(args.ok());
    hlo::Evaluator ev;
    auto want = ev.Evaluate(*calls, *args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ASSERT_TRUE(LapackCustomCalls().Run(*calls).ok());
    auto got = ev.Evaluate(*calls, *args);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(want->tuple_size(), 3);
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(testing::WorstError(got->element(i), want->element(i), 0, 0), 0) << i;
    }
  }
  CheckAgainstEvaluator(TpuLuModule("2,", 4, 4), "tpu-v4", 0, 0);
}

TEST(LapackCompileTest, MalformedFlagIsALocatedError) {
  auto m = Parse(R"(HloModule bad
ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT c = (f32[2,2], s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 1 : ui8}
}
)");
  ASSERT_NE(m, nullptr);
  auto st = LapackCustomCalls().Run(*m);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find(
                ":4:8: error: %c: custom-call lapack_spotrf_ffi: uplo = 1"),
            std::string::npos)
      << st.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
