// The HLO of JAX's QR custom-calls (lapack-custom-calls, compiler/passes/lapack_custom_calls.h):
// geqrf — `Qr` of JAX's TPU lowering, lapack_?geqrf_ffi of its CPU lowering — and orgqr —
// `ProductOfElementaryHouseholderReflectors`, lapack_?orgqr_ffi — as the formulas of
// hlo/eval/kernels/householder_qr.h (XLA's QrExpander's reflector), unrolled per column in the
// element type: slices, elementwise ops, reduces (the reflector's norm and v^T times the trailing
// block: sums on the VPU, no MXU rounding) and dynamic-update-slices at constant offsets. XLA's
// QrExpander blocks the columns (block size 128) and runs them in a while loop; the arithmetic per
// column is the same, the order of the sums may differ, so values agree with the evaluator (which
// computes in f64) to rounding, not bit for bit.
#pragma once

#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace tpusim::compiler {

/// (a with R on and above the diagonal and the reflectors below it, taus [..., min(m, n)]) of
/// `cc`'s operand a [..., m, n] (floating point), placed before `cc`.
hlo::HloInstruction* ExpandGeqrf(hlo::HloModule& module, hlo::HloComputation* comp,
                                 hlo::HloInstruction* cc);

/// q [..., m, n] of `cc`'s operands (a [..., m, n] holding reflectors below its diagonal, taus
/// [..., t], t <= min(m, n)), placed before `cc`.
hlo::HloInstruction* ExpandHouseholderProduct(hlo::HloModule& module, hlo::HloComputation* comp,
                                              hlo::HloInstruction* cc);

}  // namespace tpusim::compiler
