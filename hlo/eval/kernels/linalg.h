// cholesky and triangular-solve (XLA operation semantics, "Cholesky" and "TriangularSolve") on
// batched matrices [..., n, n], computed in f64 and rounded once to the element type.
//   cholesky(a), lower:  l with a = l * l^T, read from a's lower triangle, zeros above the
//                        diagonal; upper: u with a = u^T * u from a's upper triangle, zeros below.
//                        A matrix whose factorization meets a negative or NaN pivot is all NaN
//                        (as XLA's CholeskyExpander returns it).
//   triangular-solve(a, b): x with op(a) * x = b (left_side) or x * op(a) = b, a [..., k, k] read
//                        from its lower (lower) or upper triangle, ones on its diagonal with
//                        unit_diagonal, op(a) = a^T for TRANSPOSE and ADJOINT (real types);
//                        b [..., k, n] (left_side) or [..., m, k]; x has b's shape.
// Errors: InvalidArgument for shapes that are not batched square matrices or a non-float type.
#pragma once

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/linalg_options.h"

namespace tpusim::hlo {

StatusOr<Literal> Cholesky(const Literal& a, const CholeskyOptions& options, const Shape& out,
                           const KernelOptions& kopt);
StatusOr<Literal> TriangularSolve(const Literal& a, const Literal& b,
                                  const TriangularSolveOptions& options, const Shape& out,
                                  const KernelOptions& kopt);

}  // namespace tpusim::hlo
