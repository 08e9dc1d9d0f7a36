// gather and scatter with XLA's full dimension-number semantics (operation semantics, "Gather" and
// "Scatter"), including operand/start-indices batching dims.
//
// gather: for output index Out, the batch index G is Out restricted to the dims not in offset_dims;
// the start vector S is start_indices at G (index_vector_dim inserted; == rank means an implicit
// trailing dim of size 1); operand start[start_index_map[k]] = S[k] and
// start[operand_batching_dims[i]] = G's component of start_indices_batching_dims[i]; starts are
// clamped to [0, dim - slice_size] (XLA clamps gather starts); offset dims of Out go, in order, to
// the operand dims that are neither collapsed nor batching. out[Out] = operand[start + offset].
// scatter: the same index mapping for each update element (update_window_dims /
// inserted_window_dims / scatter_dims_to_operand_dims / input_batching_dims); results start as the
// operands and out[i] = to_apply(out[i], update) in row-major order of the updates. An update
// window that does not fit entirely inside the operand is skipped (XLA's HloEvaluator; the
// semantics doc calls out-of-bounds scatter implementation-defined and XLA skips).
#pragma once

#include <span>

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

StatusOr<Literal> Gather(const Literal& operand, const Literal& start_indices,
                         const GatherDimensionNumbers& dnums, std::span<const int64_t> slice_sizes,
                         const Shape& out, const KernelOptions& options);

/// Multi-operand scatter: operands and updates pair up; `out` is an array (one operand) or a tuple.
StatusOr<Literal> Scatter(std::span<const Literal* const> operands, const Literal& scatter_indices,
                          std::span<const Literal* const> updates,
                          const ScatterDimensionNumbers& dnums, const CalledComputation& to_apply,
                          const Shape& out, const KernelOptions& options);

}  // namespace tpusim::hlo
