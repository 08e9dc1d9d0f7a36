// The shape rules of the ops that reinterpret an array without computing — bitcast,
// bitcast-convert and dynamic-reshape — following XLA's ShapeVerifier::HandleBitcast,
// ShapeInference::InferBitcastConvertShape and InferDynamicReshapeShape. Before these rules the
// three were taken as written: a bitcast to fewer elements, a bitcast-convert to other dimensions
// and a dynamic-reshape without its size operands passed `compile` and timing-only `run` (issue
// 21, session 17). Messages carry no location (the verifier adds it).
#pragma once

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// bitcast(x): as written when the result is an array of x's byte size (tpusim's bitcast is a
/// view of the same bytes; XLA's layout-sensitive verifier requires the same).
StatusOr<Shape> InferBitcast(const HloInstruction& inst);

/// bitcast-convert(x) to type T: x's dimensions when T and x's type are as wide; for a narrower
/// T, x's dimensions plus a last one of the width ratio; for a wider T, x's dimensions without the
/// last, which must be the ratio. As XLA's InferBitcastConvertShape.
StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst);

/// dynamic-reshape(x, size_0, ..., size_{r-1}): as written when there is one size per result
/// dimension, each an s32 scalar, the result has x's element type and at most x's elements (the
/// result is written at its bounds). Sizes are values (clamped to the bound at run time).
StatusOr<Shape> InferDynamicReshape(const HloInstruction& inst);

}  // namespace tpusim::hlo
