// reduce, reduce-window, select-and-scatter and map: the operations that apply a called
// computation.
//
// Evaluation order (fixed, so results are reproducible bit for bit): for each output element, the
// accumulator starts at the init value and folds the reduced elements in row-major order of the
// reduced index space — acc = f(acc, x) — as XLA's HloEvaluator does; every reduce kernel of the
// lowering sums in this order too, whatever its blocking (docs/codegen.md, "Reductions: one
// order"), so a simulated reduction checks bit for bit. Sums of bf16/f16/f8 (an
// `add(p0, p1)` reducer) accumulate in f32 and round once to the element type when
// KernelOptions::f32_accumulation is set (the default: what a TPU and XLA's compiled backends do);
// otherwise, and for every other reducer, the accumulator has the reducer's HLO type and is rounded
// after every step. Output elements are distributed over threads in fixed blocks; each is computed
// by one thread.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// reduce(operands..., inits...) over `dimensions`. One operand: returns an array of `out`;
/// several: `out` is a tuple and the reducer takes (acc..., x...) and returns a tuple.
StatusOr<Literal> Reduce(std::span<const Literal* const> operands,
                         std::span<const Literal* const> inits, std::span<const int64_t> dimensions,
                         const CalledComputation& reducer, const Shape& out,
                         const KernelOptions& options);

/// reduce-window: windows over the (padded, base-dilated) operand; positions in padding or dilation
/// holes are skipped (XLA's HloEvaluator). Multi-operand like Reduce.
StatusOr<Literal> ReduceWindow(std::span<const Literal* const> operands,
                               std::span<const Literal* const> inits, const Window& window,
                               const CalledComputation& reducer, const Shape& out,
                               const KernelOptions& options);

/// select-and-scatter (e.g. the gradient of max-pooling): for each window (one per `source`
/// element), select one operand position — the first valid position in row-major window order,
/// replaced by a later candidate c whenever select(current, c) is false — and combine source into
/// the result there with `scatter`; the result starts as `init` everywhere.
StatusOr<Literal> SelectAndScatter(const Literal& operand, const Literal& source,
                                   const Literal& init, const Window& window,
                                   const CalledComputation& select,
                                   const CalledComputation& scatter, const Shape& out,
                                   const KernelOptions& options);

/// map(operands...) with a scalar computation applied elementwise.
StatusOr<Literal> Map(std::span<const Literal* const> operands, const CalledComputation& fn,
                      const Shape& out, const KernelOptions& options);

/// members[0] op members[1] op ... elementwise, folded in order (a collective's group order). Sums
/// of bf16/f16 accumulate in f32 and round once under options.f32_accumulation (as Reduce).
/// InvalidArgument for an empty list or arrays of different shapes.
StatusOr<Literal> FoldArrays(const CalledComputation& c, std::span<const Literal* const> members,
                             const KernelOptions& options);

/// Applies `c` to two scalars of the same type (fast path when possible). Used by collectives too.
StatusOr<Literal> ApplyBinaryScalar(const CalledComputation& c, const Literal& a, const Literal& b);

/// dst[i] = c(dst[i], src[i]) for every element of two same-shaped arrays (fast path when
/// possible).
Status CombineArrays(const CalledComputation& c, Literal& dst, const Literal& src);

}  // namespace tpusim::hlo
