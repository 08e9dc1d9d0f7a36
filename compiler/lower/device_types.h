// HLO element types -> the ISA's element types (isa::DType), the one place that decides which HLO
// types tpusim's cores can hold.
#pragma once

#include <optional>
#include <string>

#include "hlo/shape.h"
#include "isa/types.h"

namespace tpusim::compiler {

/// Each HLO type to the ISA type of the same name: f32, bf16, f16, f8e4m3fn, f8e5m2, s8, u8, s16,
/// u16, s32, u32, s64, u64, pred (the narrow types stored packed at their own width and widened
/// to 32 bits in the VPU, as XLA's TPU backend does; s64/u64 stored at 8 bytes and computed exactly, each element op
/// costed as several 32-bit VPU ops, as XLA's TPU backend emulates them with pairs of 32-bit
/// values; the f8 types stored at 1 byte and computed in f32, as XLA's TPU backend upcasts them).
/// Every other type (f64, complex, s4/u4, the other f8 variants) -> nullopt.
std::optional<isa::DType> DeviceType(hlo::PrimitiveType t);

/// Why element type `t` (one DeviceType refuses) cannot live on the device, with the remedy and the
/// list of device types: the text of the located "cannot lower" error.
std::string NoDeviceTypeReason(hlo::PrimitiveType t);

}  // namespace tpusim::compiler
