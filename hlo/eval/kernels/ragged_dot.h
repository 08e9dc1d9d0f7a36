// ragged-dot on the CPU (hlo/ragged_dot.h for the form and its meaning): per group g, the dot of
// lhs with rhs[g] (the kernel of `dot`, DotGeneral, with the same numerics), whose rows of group
// g are copied into the result; rows past the last group are 0. Group sizes are clamped to the
// rows left (a negative size is 0).
#pragma once

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/ragged_dot.h"

namespace tpusim::hlo {

/// `round_operands_to_bf16` and `options` as for DotGeneral; `ragged_out` the output dimension
/// lhs's ragged dimension becomes (RaggedOutputDimension).
StatusOr<Literal> RaggedDot(const Literal& lhs, const Literal& rhs, const Literal& group_sizes,
                            const DotDimensionNumbers& dnums, const RaggedDotDims& dims,
                            int64_t ragged_out, const Shape& out, const KernelOptions& options,
                            bool round_operands_to_bf16);

}  // namespace tpusim::hlo
