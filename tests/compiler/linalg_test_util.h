// Modules for the cholesky / triangular-solve tests (cholesky_expander_test.cc,
// triangular_solve_expander_test.cc, linalg_expander_test.cc): well-conditioned operands built in
// HLO from a random parameter, and the expansion's values against the evaluator's f64 kernels.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "compiler/pass/hlo_pass.h"
#include "hlo/computation.h"
#include "hlo/verifier.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler::testing {

inline std::string Dims(const std::string& batch, int64_t r, int64_t c) {
  return fmt::format("[{}{},{}]", batch.empty() ? "" : batch + ",", r, c);
}

// f32 `name` = p + diag * I of shape batch + [k, k] (p a parameter): a triangle that solves well.
inline std::string Dominant(const std::string& name, const std::string& batch, int64_t k,
                            int param, double diag) {
  const std::string d = Dims(batch, k, k);
  const int rank = static_cast<int>(std::count(batch.begin(), batch.end(), ',')) +
                   (batch.empty() ? 2 : 3);
  return fmt::format(R"(
  {0}.p = f32{1} parameter({2})
  {0}.r = s32{1} iota(), iota_dimension={3}
  {0}.c = s32{1} iota(), iota_dimension={4}
  {0}.eye = pred{1} compare({0}.r, {0}.c), direction=EQ
  {0}.v = f32[] constant({5})
  {0}.big = f32{1} broadcast({0}.v), dimensions={{}}
  {0}.z0 = f32[] constant(0)
  {0}.z = f32{1} broadcast({0}.z0), dimensions={{}}
  {0}.diag = f32{1} select({0}.eye, {0}.big, {0}.z)
  {0} = f32{1} add({0}.p, {0}.diag))",
                     name, d, param, rank - 2, rank - 1, diag);
}

inline std::string BatchDims(const std::string& batch) {
  std::string out;
  const int n =
      batch.empty() ? 0 : static_cast<int>(std::count(batch.begin(), batch.end(), ',')) + 1;
  for (int i = 0; i < n; ++i) out += fmt::format("{}{}", i ? "," : "", i);
  return out;
}

// cholesky of a symmetric positive definite s = p * p^T + n * I.
inline std::string CholeskyModule(const std::string& batch, int64_t n, bool lower) {
  const std::string d = Dims(batch, n, n);
  const int nb =
      batch.empty() ? 0 : static_cast<int>(std::count(batch.begin(), batch.end(), ',')) + 1;
  return fmt::format(R"(
HloModule chol
ENTRY e {{{0}
  q = f32{1} parameter(1)
  pt = f32{1} dot(q, q), lhs_batch_dims={{{2}}}, rhs_batch_dims={{{2}}}, lhs_contracting_dims={{{3}}}, rhs_contracting_dims={{{3}}}, operand_precision={{highest,highest}}
  s = f32{1} add(pt, a.diag)
  ROOT l = f32{1} cholesky(s), lower={4}
}}
)",
                     Dominant("a", batch, n, 0, static_cast<double>(n)), d, BatchDims(batch),
                     nb + 1, lower ? "true" : "false");
}

inline std::string SolveModule(const std::string& batch, int64_t k, int64_t other, bool left,
                               bool lower, const std::string& transpose, bool unit) {
  const std::string bshape = left ? Dims(batch, k, other) : Dims(batch, other, k);
  return fmt::format(R"(
HloModule trsm
ENTRY e {{{0}
  b = f32{1} parameter(1)
  ROOT x = f32{1} triangular-solve(a, b), left_side={2}, lower={3}, unit_diagonal={4}, transpose_a={5}
}}
)",
                     Dominant("a", batch, k, 0, 4.0), bshape, left ? "true" : "false",
                     lower ? "true" : "false", unit ? "true" : "false", transpose);
}

// Evaluates `text` as written and after `pass`, with the same random arguments; the worst
// tolerance ratio of the expansion against the evaluator's kernel (f64, so not bit for bit). Also
// expects: the pass changed the module, no cholesky / triangular-solve is left, the result
// verifies and a second run changes nothing.
inline double ExpandedVsKernel(const std::string& text, HloPass& pass, double atol,
                               double rtol) {
  auto want_m = Parse(text);
  auto got_m = Parse(text);
  if (!want_m || !got_m) return 1e9;
  auto changed = pass.Run(*got_m);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(changed.ok() && *changed);
  const Status verified = hlo::VerifyModule(*got_m);
  EXPECT_TRUE(verified.ok()) << verified.message();
  auto again = pass.Run(*got_m);
  EXPECT_TRUE(again.ok() && !*again) << "not idempotent";
  for (const auto& comp : got_m->computations()) {
    for (const auto& i : comp->instructions()) {
      EXPECT_NE(i->opcode(), hlo::HloOpcode::kCholesky);
      EXPECT_NE(i->opcode(), hlo::HloOpcode::kTriangularSolve);
    }
  }
  auto args = hlo::Evaluator::MakeRandomArguments(*want_m, 7);
  EXPECT_TRUE(args.ok());
  if (!args.ok()) return 1e9;
  hlo::Evaluator ev;
  auto want = ev.Evaluate(*want_m, *args);
  auto got = ev.Evaluate(*got_m, *args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  EXPECT_TRUE(got.ok()) << got.status().message();
  if (!want.ok() || !got.ok()) return 1e9;
  return WorstError(*got, *want, atol, rtol);
}

}  // namespace tpusim::compiler::testing
