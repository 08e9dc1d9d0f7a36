// The evaluator's PartialReduce (hlo/partial_reduce.h: approx_max_k / approx_min_k's first stage
// on a TPU): bin j of the reduced dimension folds elements j, L + j, 2L + j, ... (fewer than n)
// from the init values: acc = cmp(acc, x) ? acc : x, with cmp the comparator called as
// (acc_1, x_1, acc_2, x_2, ...), in increasing element order.
#pragma once

#include <span>

#include "common/status.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/literal.h"
#include "hlo/partial_reduce.h"

namespace tpusim::hlo {

/// PartialReduce of `operands` (k arrays of one shape) from `inits` (k scalars) in the form `f`;
/// returns the tuple of k arrays of `out`. Errors: the comparator's, or one that does not return
/// pred[].
StatusOr<Literal> PartialReduce(std::span<const Literal* const> operands,
                                std::span<const Literal* const> inits,
                                const PartialReduceForm& f, const CalledComputation& comparator,
                                const Shape& out);

}  // namespace tpusim::hlo
