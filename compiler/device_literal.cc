#include "compiler/device_literal.h"

#include <fmt/format.h>

#include <cstring>

namespace tpusim::compiler {

using hlo::PrimitiveType;

std::string DeviceBytes(const hlo::Literal& lit) {
  return std::string(reinterpret_cast<const char*>(lit.raw()),
                     static_cast<size_t>(lit.size_bytes()));
}

StatusOr<hlo::Literal> LiteralFromDevice(const hlo::Shape& shape, const std::string& bytes) {
  TPUSIM_ASSIGN_OR_RETURN(hlo::Literal lit, hlo::Literal::Create(shape));
  if (static_cast<int64_t>(bytes.size()) != lit.size_bytes()) {
    return Internal(fmt::format("{}: {} device bytes for {} expected", shape.ToString(),
                                bytes.size(), lit.size_bytes()));
  }
  if (lit.size_bytes() > 0) {
    std::memcpy(lit.mutable_raw(), bytes.data(), static_cast<size_t>(lit.size_bytes()));
  }
  return lit;
}

}  // namespace tpusim::compiler
