// triangular-solve-expander: rewrites `triangular-solve(a, b)` (a [..., k, k], b [..., k, n] with
// left_side, else [..., m, k]) into slices, HIGHEST-precision dots, divides and
// dynamic-update-slices, as XLA's TriangularSolveExpander does on TPU. Its direct form: one row
// (left_side) or column of the result per step, each the corresponding row of b less the dot of
// a's off-diagonal part of that row with the rows already solved, divided by a's diagonal element
// (not read with unit_diagonal). The steps go forward when op(a) is lower triangular on the left
// or upper on the right, backward otherwise; XLA writes them as a loop, which tpusim would unroll
// (while_lowering.h), so they are emitted unrolled.
// Assumption (written, not measured): XLA's TPU backend uses this direct form only for a batch of
// more than 8 matrices smaller than 32 and otherwise inverts 128 x 128 diagonal blocks and solves
// with block dots; tpusim uses the direct form for every size, so a large solve's cycles are those
// of k dependent matrix-vector steps rather than of k/128 block dots.
// Values: the solution to float rounding (checked against the evaluator's f64 solve in
// tests/compiler/linalg_expander_test.cc). Errors: InvalidArgument (located) for operand shapes
// that are not batched square a and a fitting b, or a malformed option; complex types are left
// for the lowering to refuse by name.
#pragma once

#include "compiler/pass/hlo_pass.h"
#include "compiler/passes/matrix_builder.h"
#include "hlo/linalg_options.h"

namespace tpusim::compiler {

/// The instructions solving op(a) x = b (or x op(a) = b) before mb's anchor; x, b's shape.
hlo::HloInstruction* BuildTriangularSolve(MatrixBuilder& mb, hlo::HloInstruction* a,
                                          hlo::HloInstruction* b,
                                          const hlo::TriangularSolveOptions& options);

class TriangularSolveExpander : public HloPass {
 public:
  std::string_view name() const override { return "triangular-solve-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
