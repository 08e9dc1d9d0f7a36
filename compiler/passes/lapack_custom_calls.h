// lapack-custom-calls: the LAPACK custom-calls of JAX's CPU lowering (jaxlib's lapack_?potrf_ffi,
// lapack_?trsm_ffi, lapack_?getrf_ffi: hlo/linalg_options.h, LapackCall) become what a module
// lowered for a TPU computes in their place. A module dumped from JAX on the CPU
// (jax.jit(f).lower(...) on a CPU host, how tests/data/hlo/jax and most users get their HLO) then
// runs as the TPU would run it:
//  * potrf -> tuple(cholesky(a), info), info = 1 where the factor holds a NaN (a failed
//    factorization is all NaN), else 0; trsm -> triangular-solve. cholesky-expander and
//    triangular-solve-expander then expand them as XLA's TPU backend does.
//  * getrf (jnp.linalg.solve, inv, det, slogdet) has no HLO op: JAX's TPU lowering writes LU with
//    partial pivoting in HLO ops itself; here the steps of hlo::LuFactor (hlo/eval/kernels/
//    linalg.h), unrolled per column — pivot search by reduces, row exchange by masks, the column
//    scaled, the trailing block updated — bit for bit the evaluator's reading of the call.
//  * LuDecomposition, the call JAX's TPU lowering writes for lu (XLA's TPU backend computes it):
//    the same steps, the pivots 0-based and the permutation they make (hlo::LuDecomposition).
//  * geqrf / orgqr (jnp.linalg.qr; TPU: Qr, ProductOfElementaryHouseholderReflectors):
//    Householder reflections per column (compiler/passes/householder_qr_expansion.h).
// A malformed call is a located InvalidArgument; eigen and SVD calls are not rewritten (the
// lowering names them as unknown targets).
#pragma once

#include <string>
#include <string_view>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class LapackCustomCalls : public HloPass {
 public:
  std::string_view name() const override { return "lapack-custom-calls"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

/// For a JAX CPU LAPACK custom-call target (`lapack_<type><routine>_ffi`) that neither this pass
/// nor eigh-expander reads: what the routine computes and what to do — lower the function for a
/// TPU, where JAX writes HLO tpusim runs (gtsv: tridiagonal_solve), or, for a routine JAX has no
/// TPU lowering of (geev: jnp.linalg.eig / eigvals; gees: jax.scipy.linalg.schur — JAX 0.10.2
/// raises "MLIR translation rule ... not found for platform tpu"), that the function cannot run on
/// a TPU. Empty for any other target.
std::string UnreadLapackCallNote(std::string_view target);

}  // namespace tpusim::compiler
