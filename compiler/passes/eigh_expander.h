// eigh-expander: the symmetric eigendecomposition of JAX's eigh — the TPU's `Eigh` custom-call
// and LAPACK's lapack_?syevd_ffi of JAX's CPU lowering (hlo/linalg_options.h) — becomes what
// XLA's TPU backend runs in its place: XLA's EighExpander (xla/hlo/transforms/expanders/
// eigh_expander.cc), a parallel two-sided Jacobi method (Brent and Luk 1985), in HLO ops:
//
//   symmetrize (the lower or upper triangle), divide by max |a|, split the matrix padded to
//   2k x 2k (k = ceil(n / 2)) into quadrants tl, tr, bl, br and v = I alike;
//   while (sweep < max_iter && any over the batch (||offdiag||^2 > epsilon^2 ||a||^2)):  <- data
//     for round in 0 .. 2k - 2:  (a counted while)
//       the 2x2 Schur rotations of the k diagonal pairs (tl[i,i], tr[i,i], br[i,i]) on the VPU,
//       rows then columns of the quadrants, rows of v, Brent and Luk's round-robin permutation;
//   w = [diag(tl), diag(br)][:n] * max |a|, v = v[:n, :n]^T; sorted: sort(w, v) along v's columns.
//
// The outer while's trip count depends on the data: it runs as real control flow (a region with
// ctrl.break_unless on its condition, compiler/passes/while_lowering.h). The while takes the
// custom-call's name, which is how `tpusim run` finds the trips the evaluator counted for the call
// (hlo::DataDependentWhiles, CustomCallInfo::loop_trips) for a timing-only run. syevd runs as Eigh
// with lower = (uplo 'L'), sorted, the sweeps and tolerance of JAX's TPU lowering, and info = 0.
//
// LAPACK's SVD (lapack_?gesdd_ffi, JAX's CPU lowering of jnp.linalg.svd; its TPU lowering writes
// QDWH, Eigh and Qr in HLO instead): the same sweeps on the Jordan-Wielandt matrix
// [[0, a], [a^T, 0]] of a [..., m, n] — its eigenvalues are +-s and |m - n| zeros, the
// eigenvectors of the k = min(m, n) largest are [u; v] / sqrt 2 — so s is those eigenvalues,
// descending (reverse), u and vt sqrt 2 times the eigenvectors' halves. An absolute accuracy of
// epsilon ||a||, as LAPACK's; a singular value 0 of a rank-deficient a shares its eigenspace with
// the zeros, so its u and v columns are not determined there (nor are they by the problem). Full
// u / vt of a non-square a (mode 'A', JAX's default) complete the k columns to a basis as JAX's
// TPU svd does: the columns past k of orgqr(geqrf(u)) padded square (Qr and
// ProductOfElementaryHouseholderReflectors calls, which lapack-custom-calls expands); mode 'N'
// gives them as zeros.
//
// Values agree with the evaluator's (hlo/eval/kernels/eigh.h: the same steps in f64) to the
// element type's rounding, eigenvector signs included. Contract: f32 a [..., n, n] (tpusim's
// device holds f64 for conversion only); anything else (another type, a non-square operand, a
// result that is not (v, w) / (v, w, info)) is a located InvalidArgument naming the call.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class EighExpander : public HloPass {
 public:
  std::string_view name() const override { return "eigh-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
