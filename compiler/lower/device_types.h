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
/// s16, u16, s32, u32, s64, u64, pred (the narrow types stored packed at their own width, widened
/// to 32 bits in the VPU, as XLA's TPU backend does; s64/u64 stored at 8 bytes and computed exactly, each element op
/// costed as several 32-bit VPU ops, as XLA's TPU backend emulates them with pairs of 32-bit
/// values; the f8 types stored at 1 byte and computed in f32, as XLA's TPU backend upcasts them;
/// f64 stored at 8 bytes for conversion only, see F64ComputedOn; s4/u4 stored one per byte, where
/// XLA's TPU backend packs two per byte, and computed as 4-bit integers, isa/types.h). Every other
/// type (complex, the other f8 variants) -> nullopt.
std::optional<isa::DType> DeviceType(hlo::PrimitiveType t);

/// True when `inst` would compute on f64 values, which the device does not (it holds f64 only to
/// convert it: loads round to f32 once, stores of an f32 are exact). Allowed: parameter, constant,
/// tuple and get-tuple-element of any type, convert f64 -> f32 (one rounding, as XLA's convert)
/// and convert to f64 from f32, bf16, f16 or f8 (exact); anything else with an f64 operand or
/// result is true (a located error: NoDeviceTypeReason(kF64)).
bool F64ComputedOn(const hlo::HloInstruction& inst);

/// Why element type `t` (one DeviceType refuses) cannot live on the device, with the remedy and the
/// list of device types: the text of the located "cannot lower" error.
std::string NoDeviceTypeReason(hlo::PrimitiveType t);

}  // namespace tpusim::compiler
