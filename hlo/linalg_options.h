// The options of cholesky and triangular-solve (XLA's CholeskyOptions and TriangularSolveOptions),
// read from the attributes the parser keeps verbatim: `lower=true`, `left_side=true`,
// `unit_diagonal=true`, `transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT`. As in XLA's HLO parser every
// attribute is optional: the booleans default to false and transpose_a to NO_TRANSPOSE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// A LAPACK custom-call of JAX's CPU lowering (jaxlib's typed-FFI targets lapack_spotrf_ffi /
/// lapack_dpotrf_ffi for cholesky, lapack_strsm_ffi / lapack_dtrsm_ffi for triangular_solve,
/// lapack_sgetrf_ffi / lapack_dgetrf_ffi for lu), which
/// a module lowered by JAX on the CPU holds where one lowered for a TPU holds the HLO op. Its
/// backend_config is an MLIR attribute dictionary of LAPACK's one-character flags as ui8,
/// e.g. `{uplo = 76 : ui8}` (76 'L', 85 'U'; side 'L'/'R', trans_x 'N'/'T'/'C', diag 'N'/'U').
///   potrf(a [..., n, n]) -> (factor [..., n, n], info s32[...]): the cholesky of a (lower for
///     uplo 'L'); info 0 where the factorization succeeded, else non-zero (tpusim: 1; LAPACK gives
///     the order of the failing leading minor: JAX only tests info == 0).
///   trsm(a [..., k, k], b) -> x: the triangular-solve with left_side = (side 'L'), lower =
///     (uplo 'L'), transpose_a = (trans_x: N NO_TRANSPOSE, T TRANSPOSE, C ADJOINT), unit_diagonal
///     = (diag 'U').
///   getrf(a [..., m, n]) -> (lu, ipiv s32[..., min(m, n)], info s32[...]) (lapack_?getrf_ffi, no
///     flags; jnp.linalg.solve, inv, det, slogdet): LU with partial pivoting, 1-based pivots; no
///     HLO op computes it, so tpusim computes it as hlo/eval/kernels/linalg.h (LuFactor) says.
/// And the one linear-algebra call of JAX's TPU lowering that no HLO op computes:
///   LuDecomposition(a [..., m, n]) -> (lu, pivots s32[..., min(m, n)], permutation s32[..., m])
///     (target "LuDecomposition", no flags; XLA's TPU backend computes it): getrf's lu, its
///     pivots 0-based, and the row permutation they make (hlo::LuDecomposition).
/// And QR (jnp.linalg.qr; hlo/eval/kernels/householder_qr.h), from either lowering:
///   geqrf: `Qr` (TPU), lapack_sgeqrf_ffi / lapack_dgeqrf_ffi (CPU): a -> (a with R and the
///     reflectors, taus [..., min(m, n)]);
///   orgqr: `ProductOfElementaryHouseholderReflectors` (TPU), lapack_sorgqr_ffi /
///     lapack_dorgqr_ffi (CPU): (a, taus) -> q [..., m, n].
/// And the symmetric eigendecomposition (jnp.linalg.eigh / eigvalsh; hlo/eval/kernels/eigh.h):
///   Eigh (TPU; XLA's EighExpander): a [..., n, n] -> (v [..., n, n], w [..., n]), backend_config
///     "lower,sort_eigenvalues,max_iter,epsilon" as XLA's EighExpander parses it ("1,1,100,1e-6";
///     0/non-zero integers, a sweep count, a float);
///   syevd: lapack_ssyevd_ffi / lapack_dsyevd_ffi (CPU): a -> (v, w, info s32[...]), flags
///     `uplo` ('L'/'U') and `mode` ('V' vectors, 'N' values only; tpusim computes v either way).
///     LAPACK's eigenvalues are ascending: it runs as Eigh with lower = (uplo 'L'), sorted, and
///     the sweep limit and tolerance JAX's TPU lowering writes for eigh (kSyevdMaxSweeps,
///     kSyevdEpsilon); info 0.
/// And the SVD of JAX's CPU lowering (jnp.linalg.svd; hlo/eval/kernels/eigh.h, Gesdd):
///   gesdd: lapack_sgesdd_ffi / lapack_dgesdd_ffi: a [..., m, n] -> (a, s [..., k], u, vt,
///     info s32[...]), k = min(m, n), flag `mode`: 'A' u [..., m, m], vt [..., n, n]; 'S' u
///     [..., m, k], vt [..., k, n]; 'N' values only (u and vt of either shape, not meaningful).
///     Computed from the eigendecomposition of [[0, a], [a^T, 0]] (eigenvalues +-s and |m - n|
///     zeros) by the same Jacobi sweeps, sorted, with kSyevdMaxSweeps and kSyevdEpsilon.
struct EighOptions {
  bool lower = true;              // a's lower triangle is read (else its upper one)
  bool sort_eigenvalues = true;   // w ascending, v's columns with them
  int64_t max_iter = 100;         // most Jacobi sweeps
  double epsilon = 1e-6;          // sweeps stop once ||offdiag||_F <= epsilon ||a||_F
};

/// The sweep limit and tolerance of an syevd call: JAX 0.10's TPU lowering of eigh writes
/// "…,100,1e-6" for f32 and f64 alike (jax._src.lax.linalg, eigh_jacobi defaults).
inline constexpr int64_t kSyevdMaxSweeps = 100;
inline constexpr double kSyevdEpsilon = 1e-6;

struct LapackCall {
  enum class Kind {
    kPotrf, kTrsm, kGetrf, kLuDecomposition, kGeqrf, kOrgqr, kEigh, kSyevd, kGesdd
  };
  Kind kind = Kind::kPotrf;
  CholeskyOptions cholesky;       // kPotrf
  TriangularSolveOptions solve;   // kTrsm
  EighOptions eigh;               // kEigh, kSyevd, kGesdd (the sweeps)
  bool full_matrices = true;      // kGesdd: mode 'A' (else 'S' or 'N')
  bool compute_uv = true;         // kGesdd: mode 'A' or 'S' (else 'N': values only)
};

/// The LAPACK call `target` names, read from `backend_config`; nullopt for any other target.
/// InvalidArgument naming `instruction` and the flag for a missing or unknown flag value.
StatusOr<std::optional<LapackCall>> GetLapackCall(std::string_view target,
                                                  std::string_view backend_config,
                                                  std::string_view instruction);

/// Whether `target` is a symmetric eigendecomposition (Eigh, lapack_?syevd_ffi) or an SVD
/// (lapack_?gesdd_ffi), which the compiler expands into a data-dependent while (the Jacobi
/// sweeps) named after the call.
bool IsJacobiTarget(std::string_view target);

/// The targets GetLapackCall knows (the LAPACK ones and the TPU's LuDecomposition, Qr,
/// ProductOfElementaryHouseholderReflectors and Eigh), sorted.
std::vector<std::string> LapackTargets();

/// Checks the operand shapes of a cholesky ([..., n, n], floating point) or a triangular-solve
/// (a [..., k, k], b [..., m, n] of a's batch dimensions and element type, k == m with left_side,
/// k == n without); InvalidArgument saying what is wrong.
Status CheckLinalgShapes(const HloInstruction& inst);

}  // namespace tpusim::hlo
