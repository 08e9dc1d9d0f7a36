// Shape inference for HLO instructions, following XLA's operation semantics
// (openxla.org/xla/operation_semantics; xla/service/shape_inference.cc for the exact rules).
//
// InferShape computes an instruction's result shape from its operands and attributes, ignoring
// layouts. Where XLA lets the text choose the element type (dot / convolution
// `preferred_element_type`, convert, bitcast-convert, iota, rng, constant, parameter) the declared
// element type is taken. Opcodes whose shape tpusim cannot infer (custom-call, infeed, fft, ...)
// are reported through HasShapeInference().
#pragma once

#include <optional>
#include <vector>

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// The inferred result shape (no layout), or nullopt if HasShapeInference(opcode) is false.
/// InvalidArgument (message without location, the verifier adds it) when the operands or attributes
/// are inconsistent: wrong operand count, mismatched dimensions, attribute out of range.
/// `num_devices` (replicas × partitions, 0 = unknown) is used for collectives with
/// `replica_groups={}`.
StatusOr<std::optional<Shape>> InferShape(const HloInstruction& instruction,
                                          int64_t num_devices = 0);

/// dot(l, r) with dimension numbers `d` and result element type `type`: [batch..., l's free
/// dimensions..., r's free dimensions...] (XLA's InferDotOpShape). InvalidArgument when a
/// dimension is out of range or used twice, the batch or contracting lists differ in length, or
/// paired dimensions differ in size.
StatusOr<Shape> InferDotShape(const Shape& l, const Shape& r, const DotDimensionNumbers& d,
                              PrimitiveType type);

/// True if InferShape computes (rather than accepts) this opcode's result shape.
bool HasShapeInference(HloOpcode opcode);

/// Opcodes whose result shape is accepted as written, in opcode table order.
std::vector<HloOpcode> OpcodesWithoutShapeInference();

}  // namespace tpusim::hlo
