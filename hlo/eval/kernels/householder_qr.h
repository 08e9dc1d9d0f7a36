// QR by Householder reflections as LAPACK's geqrf / orgqr return it, the two custom-calls a JAX
// module holds for jnp.linalg.qr: `Qr` and `ProductOfElementaryHouseholderReflectors` from JAX's
// TPU lowering (XLA's TPU backend expands them, QrExpander), lapack_?geqrf_ffi and
// lapack_?orgqr_ffi from its CPU lowering. Computed in f64 and rounded once to the element type;
// the compiler's expansion (compiler/passes/householder_qr_expansion.h) computes the same formulas
// in the element type.
//
//   Geqrf(a [..., m, n]) -> (r_and_v [..., m, n], taus [..., min(m, n)]): for k < min(m, n), the
//     reflector of column k below row k (XLA's QrExpander House): alpha = a[k, k], x = a[k+1:, k],
//     sigma = |x|^2, mu = sqrt(alpha^2 + sigma); sigma == 0: beta = alpha, tau = 0, v = e_k;
//     else beta = (alpha < 0 ? mu : -mu), tau = (beta - alpha) / beta, v = [1, x / (alpha -
//     beta)]; a[k, k] = beta, a[k+1:, k] = v[1:], and a[k:, k+1:] -= tau v (v^T a[k:, k+1:]).
//   HouseholderProduct(a [..., m, n], taus [..., t]) -> q [..., m, n]: the first n columns of
//     H_0 H_1 ... H_{t-1}, H_j = I - tau_j v_j v_j^T with v_j = [0 (j), 1, a[j+1:, j]].
// Errors: InvalidArgument for a non-float operand, t > min(m, n), or a mismatching result shape.
#pragma once

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

StatusOr<Literal> Geqrf(const Literal& a, const Shape& out, const KernelOptions& kopt);
StatusOr<Literal> HouseholderProduct(const Literal& a, const Literal& taus, const Shape& out,
                                     const KernelOptions& kopt);

}  // namespace tpusim::hlo
