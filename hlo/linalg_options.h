// The options of cholesky and triangular-solve (XLA's CholeskyOptions and TriangularSolveOptions),
// read from the attributes the parser keeps verbatim: `lower=true`, `left_side=true`,
// `unit_diagonal=true`, `transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT`. As in XLA's HLO parser every
// attribute is optional: the booleans default to false and transpose_a to NO_TRANSPOSE.
#pragma once

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

struct CholeskyOptions {
  bool lower = false;  // a = l * l^T with l lower triangular (else a = u^T * u, u upper)
};

enum class TriangularSolveTranspose { kNoTranspose, kTranspose, kAdjoint };

struct TriangularSolveOptions {
  bool left_side = false;      // solve op(a) * x = b (else x * op(a) = b)
  bool lower = false;          // a's lower triangle is read (else its upper one)
  bool unit_diagonal = false;  // a's diagonal is taken as ones and not read
  TriangularSolveTranspose transpose_a = TriangularSolveTranspose::kNoTranspose;
  /// op(a) is a's transpose (TRANSPOSE, or ADJOINT, which is the transpose for real types).
  bool transposed() const { return transpose_a != TriangularSolveTranspose::kNoTranspose; }
};

/// The options of a cholesky; InvalidArgument naming the attribute if one is not a bool.
StatusOr<CholeskyOptions> GetCholeskyOptions(const HloInstruction& inst);
/// The options of a triangular-solve; InvalidArgument naming the attribute if one is malformed.
StatusOr<TriangularSolveOptions> GetTriangularSolveOptions(const HloInstruction& inst);

/// Checks the operand shapes of a cholesky ([..., n, n], floating point) or a triangular-solve
/// (a [..., k, k], b [..., m, n] of a's batch dimensions and element type, k == m with left_side,
/// k == n without); InvalidArgument saying what is wrong.
Status CheckLinalgShapes(const HloInstruction& inst);

}  // namespace tpusim::hlo
