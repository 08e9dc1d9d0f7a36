#include "compiler/lower/device_types.h"

namespace tpusim::compiler {

std::optional<isa::DType> DeviceType(hlo::PrimitiveType t) {
  switch (t) {
    case hlo::PrimitiveType::kF32:
      return isa::DType::kF32;
    case hlo::PrimitiveType::kBF16:
      return isa::DType::kBF16;
    case hlo::PrimitiveType::kS8:
      return isa::DType::kS8;
    case hlo::PrimitiveType::kS32:
    case hlo::PrimitiveType::kS64:
    case hlo::PrimitiveType::kU32:
    case hlo::PrimitiveType::kU64:
      return isa::DType::kS32;
    case hlo::PrimitiveType::kPred:
      return isa::DType::kPred;
    default:
      return std::nullopt;
  }
}

}  // namespace tpusim::compiler
