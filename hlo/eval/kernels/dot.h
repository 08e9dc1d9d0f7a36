// dot (DotGeneral) on the CPU.
//
// Semantics (XLA operation semantics, "DotGeneral"): result dims are [batch..., lhs free..., rhs
// free...], out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n] over all contracting dims (k in
// row-major order of the lhs contracting dims as listed).
//
// Numerics: operands are converted to an accumulation type — f32 for f16/bf16/f32 operands, f64 if
// either is f64, 64-bit wrapping integers for integer operands — multiplied and summed in it, and
// the sum is converted once to the result type (RNE). This is what XLA's CPU backend does for bf16:
// its float-normalization pass upcasts bf16 dots to f32 and converts the f32 result back (XLA CPU
// has no native bf16 GEMM), so a bf16 dot accumulates in f32. Integer dots wrap modulo 2^bits as
// XLA's s32 dot does. The f32 GEMM is Eigen's (blocked, vectorized across rows/columns; each output
// sums over k sequentially within a k-block), run on fixed [kRowBlock x kColBlock] output tiles so
// that the result never depends on the thread count.
//
// With KernelOptions::tpu_default_precision (see there), f32 operands of a dot whose
// operand_precision is DEFAULT are first rounded to bf16 — TPU's one-pass MXU behaviour (DESIGN.md,
// Numerics) — so the host reference can match the simulator's precision.
#pragma once

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// Output tile of one GEMM call (fixed, independent of threads).
inline constexpr int64_t kDotRowBlock = 128;
inline constexpr int64_t kDotColBlock = 512;

/// out = dot(lhs, rhs) with `dnums`. InvalidArgument naming the shapes if batch/contracting sizes
/// disagree or `out` is not [batch..., lhs free..., rhs free...]; ResourceExhausted over max_bytes.
/// `round_operands_to_bf16`: round f32 operand values to bf16 first (TPU DEFAULT precision).
StatusOr<Literal> DotGeneral(const Literal& lhs, const Literal& rhs,
                             const DotDimensionNumbers& dnums, const Shape& out,
                             const KernelOptions& options, bool round_operands_to_bf16 = false);

/// Batched row-major GEMM on fixed tiles: c[b] = a[b] ([M,K]) * w[b] ([K,N]), T = float or double.
/// Deterministic for any thread count. Exposed for convolution and the benchmarks. k_tile > 0: the
/// sums follow the MXU's order with k_tile-row weight tiles (gemm.h MxuOrderGemmTile).
template <typename T>
void BatchedGemm(const T* a, const T* w, T* c, int64_t batch, int64_t m, int64_t k, int64_t n,
                 int threads, int64_t k_tile = 0);

}  // namespace tpusim::hlo
