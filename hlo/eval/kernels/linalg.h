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

/// Batch count and matrix sizes of x [..., rows, cols] (batch: the product of the leading
/// dimensions).
struct Batched {
  int64_t batch = 1, rows = 0, cols = 0;
};
/// The Batched sizes of `x`; InvalidArgument "<what> must be a floating-point [..., m, n]" for a
/// tuple, a rank below 2 or a non-float element type.
StatusOr<Batched> MatrixDims(const Literal& x, const char* what);

StatusOr<Literal> Cholesky(const Literal& a, const CholeskyOptions& options, const Shape& out,
                           const KernelOptions& kopt);
StatusOr<Literal> TriangularSolve(const Literal& a, const Literal& b,
                                  const TriangularSolveOptions& options, const Shape& out,
                                  const KernelOptions& kopt);

/// LU with partial pivoting as LAPACK's getrf returns it (jaxlib's lapack_?getrf_ffi), computed
/// step by step in the element type (f32 or f64) exactly as compiler/passes/lapack_custom_calls.cc
/// emits it, so the two agree bit for bit. a [..., m, n]; for k < min(m, n):
///   p = k + the first i with |a[k+i, k]| == max |a[k:, k]| (p = m when that max is NaN);
///   rows k and p exchanged, the new row k read as a masked sum 0 + a[p, j] (so -0 becomes +0 and
///   an out-of-range p gives zeros), the old row k written to row p;
///   info = k + 1 at the first pivot a[k, k] equal to zero (0 when there is none);
///   a[i, k] /= a[k, k] for i > k unless the pivot is zero; a[i, j] -= a[i, k] * a[k, j] for
///   i, j > k (a product then a difference, each rounded).
/// Returns (lu [..., m, n], ipiv s32[..., min(m, n)] holding p + 1, info s32[...]) with `out` the
/// tuple's shape. Errors: InvalidArgument for another element type or a mismatching `out`.
StatusOr<Literal> LuFactor(const Literal& a, const Shape& out, const KernelOptions& kopt);

/// The TPU's LuDecomposition custom-call (JAX's lu on a TPU): LuFactor's lu, its pivots 0-based
/// (p, not p + 1) and the permutation they make: perm = iota(m), then for k < min(m, n) perm[k]
/// and perm[p_k] exchanged (jax.lax.linalg.lu_pivots_to_permutation), so a[perm] = l * u.
/// `out` is (lu [..., m, n], s32[..., min(m, n)], s32[..., m]); InvalidArgument as LuFactor.
StatusOr<Literal> LuDecomposition(const Literal& a, const Shape& out, const KernelOptions& kopt);

}  // namespace tpusim::hlo
