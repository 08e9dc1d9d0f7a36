// HLO element types -> the ISA's element types (isa::DType), the one place that decides which HLO
// types tpusim's cores can hold.
#pragma once

#include <optional>
#include <string>

#include "hlo/instruction.h"
#include "hlo/shape.h"
#include "isa/types.h"

namespace tpusim::compiler {

/// Each HLO type to the ISA type of the same name: f32, bf16, f16, the f8 types, s4, u4, s8, u8,
/// s16, u16, s32, u32, s64, u64, f64, pred (the narrow types stored packed at their own width,
/// widened to 32 bits in the VPU, as XLA's TPU backend does; s64/u64/f64 stored at 8 bytes and
/// computed exactly (f64 in binary64, only by the ops F64ComputedOn allows), each element op
/// costed as several 32-bit VPU ops, as XLA's TPU backend emulates them with pairs of 32-bit
/// values; the f8 types stored at 1 byte and computed in f32, as XLA's TPU backend upcasts them;
/// s4/u4 stored one per byte, where XLA's TPU backend packs two per byte, and computed as 4-bit
/// integers, isa/types.h). Every other type (complex, the other f8 variants) -> nullopt.
std::optional<isa::DType> DeviceType(hlo::PrimitiveType t);

/// True when `inst` has an f64 operand or result and is not one of the ops the device computes
/// on f64: the ops that hold or move bytes (parameter, constant, tuple, get-tuple-element,
/// broadcast, reshape, bitcast, transpose, copy, slice, concatenate, reverse, pad, dynamic-slice,
/// dynamic-update-slice, gather) and the VPU's elementwise float arithmetic, compare, select, clamp,
/// is-finite, convert and reduce, which compute f64 in binary64 (isa/numerics.h; XLA's TPU backend emulates
/// f64 with pairs of f32, whose cost core.vpu.ops_per_f64_element models). True for the rest (a
/// dot, convolution, collective, sort, scatter, ... on f64): a located error,
/// NoDeviceTypeReason(kF64).
bool F64ComputedOn(const hlo::HloInstruction& inst);

/// Why element type `t` (one DeviceType refuses) cannot live on the device, with the remedy and the
/// list of device types: the text of the located "cannot lower" error.
std::string NoDeviceTypeReason(hlo::PrimitiveType t);

}  // namespace tpusim::compiler
