// lapack-custom-calls: the LAPACK custom-calls of JAX's CPU lowering (jaxlib's lapack_?potrf_ffi,
// lapack_?trsm_ffi: hlo/linalg_options.h, LapackCall) become the HLO ops a module lowered for a
// TPU holds in their place — `cholesky` and `triangular-solve` — which cholesky-expander and
// triangular-solve-expander then expand as XLA's TPU backend does. A module dumped from JAX on the
// CPU (jax.jit(f).lower(...) on a CPU host, how tests/data/hlo/jax and most users get their HLO)
// then runs as the TPU would run it. potrf's (factor, info) becomes tuple(cholesky(a), info) with
// info = 1 where the factor holds a NaN (a failed factorization is all NaN), else 0 — the
// evaluator's reading of the call (hlo/eval/custom_call_table.cc), so values agree bit for bit.
// A malformed backend_config is a located InvalidArgument; LU (lapack_?getrf_ffi), QR, eigen and
// SVD calls are not rewritten (the lowering names them as unknown targets).
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class LapackCustomCalls : public HloPass {
 public:
  std::string_view name() const override { return "lapack-custom-calls"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
