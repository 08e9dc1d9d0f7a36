// The symmetric eigendecomposition of JAX's eigh (hlo/linalg_options.h: the TPU's `Eigh`
// custom-call and LAPACK's syevd from JAX's CPU lowering) as XLA's TPU backend computes it: XLA's
// EighExpander (xla/hlo/transforms/expanders/eigh_expander.cc), a parallel two-sided Jacobi method
// (Brent and Luk, SIAM J. Sci. Stat. Comput. 6(1), 1985). The compiler's expansion
// (compiler/passes/eigh_expander.h) writes the same steps in HLO; this kernel runs them in f64 and
// rounds once, so the two agree to the element type's rounding — eigenvectors included, with the
// same signs, since both rotate the same pairs in the same order (an eigenvector's sign is not
// defined by the problem; this is the sign XLA's TPU backend gives).
//
// Steps, per matrix a [n, n] (n >= 2; n <= 1 gives v = 1, w = a):
//  1. symmetrize: the lower (or upper) triangle mirrored; divide by scale = max |a| (1 if 0);
//  2. pad to 2k x 2k, k = ceil(n / 2), with zeros; split into quadrants tl, tr, bl, br (k x k),
//     v the identity in the same quadrants;
//  3. sweeps while sweep < max_iter and, for some matrix of the batch, ||offdiag||_F^2 >
//     epsilon^2 ||a||_F^2 (the whole batch sweeps together); a sweep is 2k - 1 rounds, each
//     rotating the k pairs (i, k + i) at once with the 2x2 symmetric Schur rotation of
//     (tl[i,i], tr[i,i], br[i,i]) (t = 0 where |tr[i,i]| <= 0.1 eps_f32 min(|tl[i,i]|, |br[i,i]|)),
//     rows then columns of a, rows of v, then the round-robin permutation of Brent and Luk;
//  4. w = [diag(tl), diag(br)][:n] * scale, v = [[v_tl, v_tr], [v_bl, v_br]][:n, :n]^T;
//  5. sorted: v's columns with w ascending (a stable sort, NaN last).
// Errors: InvalidArgument for a non-square or non-float operand or a result shape that is not
// (v [..., n, n], w [..., n]) (+ info s32[...] for syevd).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/linalg_options.h"

namespace tpusim::hlo {

/// (v, w) of a [..., n, n], or (v, w, info = 0) with `lapack_info`; `sweeps` (if not null) gets
/// the Jacobi sweeps run (the trips of the expansion's while loop).
StatusOr<Literal> Eigh(const Literal& a, const EighOptions& options, bool lapack_info,
                       const Shape& out, const KernelOptions& kopt, int64_t* sweeps);

/// gesdd (hlo/linalg_options.h): (a, s, u, vt, info = 0) of a [..., m, n] from the Eigh of the
/// Jordan-Wielandt matrix [[0, a], [a^T, 0]] ((m + n) x (m + n), f64, sorted): its k = min(m, n)
/// largest eigenvalues are s (descending) and their eigenvectors [u; v] / sqrt 2 give u's and
/// v's columns — the device's expansion (compiler/passes/eigh_expander.h) runs the same steps, so
/// signs agree. u's columns / vt's rows past k (full_matrices=True on a non-square a) complete an
/// orthonormal basis as JAX's TPU svd does: the last columns of orgqr(geqrf(u)) (of v for vt);
/// zeros when !compute_uv (mode 'N'). `sweeps` as for Eigh.
StatusOr<Literal> Gesdd(const Literal& a, const EighOptions& options, bool compute_uv,
                        const Shape& out, const KernelOptions& kopt, int64_t* sweeps);

}  // namespace tpusim::hlo
