// sort: multi-operand, along one dimension, ordered by a comparator computation (operation
// semantics, "Sort"). The comparator receives (a0, b0, a1, b1, ...) — element pairs of every
// operand — and returns pred[] "a before b". The evaluator always sorts stably (std::stable_sort):
// a stable order is a valid result of an unstable sort and keeps results deterministic. A
// comparator recognized as compare(p0, p1, direction[, TOTALORDER]) runs natively.
#pragma once

#include <span>

#include "common/status.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// Returns one array (one operand) or a tuple of the sorted operands.
StatusOr<Literal> Sort(std::span<const Literal* const> operands, int64_t dimension,
                       const CalledComputation& comparator, const Shape& out,
                       const KernelOptions& options);

}  // namespace tpusim::hlo
