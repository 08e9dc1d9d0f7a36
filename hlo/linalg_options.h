// The options of cholesky and triangular-solve (XLA's CholeskyOptions and TriangularSolveOptions),
// read from the attributes the parser keeps verbatim: `lower=true`, `left_side=true`,
// `unit_diagonal=true`, `transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT`. As in XLA's HLO parser every
// attribute is optional: the booleans default to false and transpose_a to NO_TRANSPOSE.
#pragma once

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
struct LapackCall {
  enum class Kind { kPotrf, kTrsm, kGetrf, kLuDecomposition, kGeqrf, kOrgqr };
  Kind kind = Kind::kPotrf;
  CholeskyOptions cholesky;       // kPotrf
  TriangularSolveOptions solve;   // kTrsm
};

/// The LAPACK call `target` names, read from `backend_config`; nullopt for any other target.
/// InvalidArgument naming `instruction` and the flag for a missing or unknown flag value.
StatusOr<std::optional<LapackCall>> GetLapackCall(std::string_view target,
                                                  std::string_view backend_config,
                                                  std::string_view instruction);

/// The targets GetLapackCall knows (the LAPACK ones and the TPU's LuDecomposition, Qr and
/// ProductOfElementaryHouseholderReflectors), sorted.
std::vector<std::string> LapackTargets();

/// Checks the operand shapes of a cholesky ([..., n, n], floating point) or a triangular-solve
/// (a [..., k, k], b [..., m, n] of a's batch dimensions and element type, k == m with left_side,
/// k == n without); InvalidArgument saying what is wrong.
Status CheckLinalgShapes(const HloInstruction& inst);

}  // namespace tpusim::hlo
