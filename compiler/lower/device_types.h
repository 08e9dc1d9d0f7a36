// HLO element types -> the ISA's element types (isa::DType), the one place that decides which HLO
// types tpusim's cores can hold.
#pragma once

#include <optional>

#include "hlo/shape.h"
#include "isa/types.h"

namespace tpusim::compiler {

/// f32 -> f32, bf16 -> bf16, s8 -> s8, s32 -> s32, pred -> pred, and s64 -> s32 (a documented
/// narrowing: PyTorch/XLA uses s64 for labels and indices whose values fit in 32 bits; values
/// outside
/// [-2^31, 2^31) wrap). Every other type (u8/u16/u32/u64, s16, f16, f64, complex, f8) -> nullopt.
std::optional<isa::DType> DeviceType(hlo::PrimitiveType t);

}  // namespace tpusim::compiler
