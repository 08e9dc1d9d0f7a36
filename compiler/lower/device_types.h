// HLO element types -> the ISA's element types (isa::DType), the one place that decides which HLO
// types tpusim's cores can hold.
#pragma once

#include <optional>
#include <string>

#include "hlo/shape.h"
#include "isa/types.h"

namespace tpusim::compiler {

/// f32 -> f32, bf16 -> bf16, f16 -> f16, s8 -> s8, u8 -> u8, s16 -> s16, u16 -> u16, s32 -> s32,
/// pred -> pred (the narrow types stored packed at their own width and widened to 32 bits in the
/// VPU, as XLA's TPU backend does), and s64 / u32 / u64 -> s32 (a documented narrowing: PyTorch/XLA
/// uses s64 for labels and indices whose values fit in 32 bits; values outside [-2^31, 2^31) wrap,
/// and u32 compares and divides as s32). Every other type (f64, complex, f8, s4/u4) -> nullopt.
std::optional<isa::DType> DeviceType(hlo::PrimitiveType t);

/// Why element type `t` (one DeviceType refuses) cannot live on the device, with the remedy and the
/// list of device types: the text of the located "cannot lower" error.
std::string NoDeviceTypeReason(hlo::PrimitiveType t);

}  // namespace tpusim::compiler
