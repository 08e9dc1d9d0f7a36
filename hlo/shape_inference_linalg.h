// The shape rules of cholesky and triangular-solve (XLA's ShapeInference::InferCholeskyShape and
// InferTriangularSolveShape). Before these rules both were taken as written: a result of other
// dimensions passed `compile` and timing-only `run` (issue 21, session 17). Messages carry no
// location (the verifier adds it).
#pragma once

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// cholesky(a): a's shape; a a floating-point array of rank >= 2 whose last two dimensions are
/// equal.
StatusOr<Shape> InferCholesky(const HloInstruction& inst);

/// triangular-solve(a, b): b's shape; a and b floating point of one type and rank >= 2, equal
/// batch dimensions, a square [..., k, k] with k = b's second-to-last dimension (left_side) or
/// last (right side).
StatusOr<Shape> InferTriangularSolve(const HloInstruction& inst);

}  // namespace tpusim::hlo
