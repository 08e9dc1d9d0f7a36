// Applying a scalar computation (a reducer, a map function, a sort comparator) to whole arrays:
// every instruction of the computation is cloned with the arrays' dimensions, so `f(a, b)` over
// scalars becomes the same ops over arrays of one shape, which the VPU lowering runs. This is how
// map, variadic reduce and sort with an arbitrary comparator become elementwise code (XLA's TPU
// backend emits each of them as one loop over the elements, calling the computation inline).
#pragma once

#include <vector>

#include "common/status.h"
#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"

namespace tpusim::compiler {

/// True if every instruction of `scalar` is a parameter, a scalar constant, an elementwise op
/// (unary, binary, compare, select, clamp, convert, bitcast-convert), a tuple or a
/// get-tuple-element of a tuple, and every parameter and the root's leaves are scalars.
bool IsElementwiseComputation(const hlo::HloComputation& scalar);

/// The values of `scalar` applied element by element: parameter i is `args[i]` (arrays, all of
/// dimensions `dims`, element type of parameter i). Returns one array per leaf of the root
/// (shape [dims] of that leaf's element type), added through `b` before its anchor.
/// InvalidArgument if !IsElementwiseComputation(scalar) or an argument does not fit its parameter.
StatusOr<std::vector<hlo::HloInstruction*>> ApplyElementwise(
    HloBuilder& b, const hlo::HloComputation& scalar, const std::vector<hlo::HloInstruction*>& args,
    const std::vector<int64_t>& dims);

}  // namespace tpusim::compiler
