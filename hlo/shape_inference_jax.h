// The shape rules of the forms newer JAX programs use — dynamic sizes (set-dimension-size,
// get-dimension-size), ragged-all-to-all and the counter-based rng-bit-generator — following XLA's
// ShapeInference (InferSetDimensionSizeShape, InferGetDimensionSizeShape) and ShapeVerifier
// (HandleRaggedAllToAll, HandleRngBitGenerator). Used by InferShape; messages carry no location
// (the verifier adds it). Before these rules the three were taken as written, and a bad dimension
// or operand reached the passes (issue 21: a double free in the dynamic padder, a TPUSIM_CHECK in
// the evaluator, modules `compile` accepted that `cpu` refused).
#pragma once

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// get-dimension-size(x), dimensions={d}: s32[]. x an array, d in [0, rank), x's dimension d at
/// most 2^31 - 1 (its size must fit the s32 result). InvalidArgument naming the rule otherwise.
StatusOr<Shape> InferGetDimensionSize(const HloInstruction& inst);

/// set-dimension-size(x, size), dimensions={d}: x's shape (dimension d becomes dynamic, bounded
/// by x's size there). x an array, d in [0, rank), size an s32 scalar. A size outside [0, bound]
/// is a run-time value, clamped by the dynamic padder (docs/codegen.md).
StatusOr<Shape> InferSetDimensionSize(const HloInstruction& inst);

/// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes): the
/// output operand's shape. input and output arrays of one element type and rank >= 1, equal in
/// every dimension but 0 (rows); the four offset/size operands s32 or s64 arrays of rank 1 or 2,
/// all of one shape. Offsets and sizes are values, checked where they are known (the evaluator).
StatusOr<Shape> InferRaggedAllToAll(const HloInstruction& inst);

/// rng-bit-generator(state), algorithm=...: as written when it is (state', bits) with state a
/// u64[n] (n >= 1), state' of state's shape and bits an integer array. The state size an
/// algorithm takes (three_fry 2, philox 2 or 3) is checked where the algorithm is expanded.
StatusOr<Shape> InferRngBitGenerator(const HloInstruction& inst);

}  // namespace tpusim::hlo
