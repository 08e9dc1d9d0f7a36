// cholesky-expander: rewrites `cholesky(a)` (a [..., n, n], floating point) into the blocked
// left-looking factorization XLA's CholeskyExpander emits (block size 128, HIGHEST-precision dots):
// for each block column i of width k, the panel a[i:, i:i+k] less l[i:, :i] * l[i:i+k, :i]^T; its
// diagonal block factored column by column (each step: the k x k block less l * l^T, the pivot's
// square root, the column below it divided by the pivot, masked in), the rows below it solved
// against it (a right-side, transposed triangular solve: triangular_solve_expander.h); and, as in
// XLA, a matrix whose pivot is NaN (not positive definite) filled with NaN. An upper cholesky
// factors a's transpose and transposes the result. XLA writes the column steps as a loop, which
// tpusim would unroll (while_lowering.h), so they are emitted unrolled.
// Values: checked against the evaluator's f64 factorization (tests/compiler/linalg_expander_test.cc).
// Errors: InvalidArgument (located) for an operand that is not batched square matrices or a
// malformed option; complex types are left for the lowering to refuse by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

/// XLA's CholeskyExpander block size (cholesky_expander.cc, BuildCholesky(..., block_size=128)).
inline constexpr int64_t kCholeskyBlockSize = 128;

class CholeskyExpander : public HloPass {
 public:
  /// `block_size` >= 1: the block columns' width (XLA's 128; tests use smaller ones to reach the
  /// blocked path with small matrices).
  explicit CholeskyExpander(int64_t block_size = kCholeskyBlockSize) : block_size_(block_size) {}
  std::string_view name() const override { return "cholesky-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  int64_t block_size_;
};

}  // namespace tpusim::compiler
