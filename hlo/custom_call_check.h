// The custom-calls whose meaning tpusim knows, checked where every module is loaded (the verifier:
// `run`, `compile`, `cpu`, `inspect` and `compare` refuse the same modules, at the same place).
// A custom-call's result shape is the caller's to write (XLA's verifier takes it as written), but
// for these targets the meaning fixes it, and the passes and the evaluator rely on it:
//   - tpu_custom_call (a Pallas TPU kernel): its backend_config must read as
//     hlo::ReadKernelCostEstimate says (strict JSON, no duplicate key, the figures integers >= 0);
//   - Eigh, lapack_ssyevd_ffi / lapack_dsyevd_ffi: a real floating-point a [..., n, n] gives
//     (v [..., n, n], w [..., n]) of a's type, syevd also info s32[...];
//   - lapack_sgesdd_ffi / lapack_dgesdd_ffi: a real floating-point a [..., m, n] gives (a, s
//     [..., k], u [..., m, m or k], vt [..., n or k, n], info s32[...]), k = min(m, n), each
//     floating part of a's type;
//   - the other LAPACK calls of hlo/linalg_options.h (potrf, trsm, getrf, LuDecomposition,
//     geqrf / Qr, orgqr / ProductOfElementaryHouseholderReflectors): the signatures written there,
//     each floating part of a's real floating-point type, pivots and info s32;
//   and their backend_config as hlo::GetLapackCall reads it.
// Which of these the device runs (f32 only) is the compiler's to say (compiler/passes/
// eigh_expander.cc); f64 runs on the CPU evaluator.
#pragma once

#include "common/status.h"
#include "hlo/instruction.h"
#include "hlo/linalg_options.h"

namespace tpusim::hlo {

/// OK for any instruction but a custom-call of a target above; for those, InvalidArgument naming
/// the rule broken (no location: the verifier adds it).
Status CheckKnownCustomCall(const HloInstruction& inst);

/// The Eigh / syevd / gesdd signature above for `inst` (a custom-call of one of those targets).
Status CheckJacobiCallShapes(const HloInstruction& inst);

/// The signature above of the LAPACK call `call` that `inst` is (hlo::GetLapackCall's reading).
Status CheckLapackCallShapes(const HloInstruction& inst, const LapackCall& call);

}  // namespace tpusim::hlo
