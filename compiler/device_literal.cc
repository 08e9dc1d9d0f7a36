#include "compiler/device_literal.h"

#include <fmt/format.h>

#include <cstring>

namespace tpusim::compiler {

using hlo::PrimitiveType;

namespace {

bool Narrowed(PrimitiveType t) { return t == PrimitiveType::kS64 || t == PrimitiveType::kU64; }

}  // namespace

std::string DeviceBytes(const hlo::Literal& lit) {
  if (Narrowed(lit.element_type())) {
    std::string out(static_cast<size_t>(lit.element_count() * 4), '\0');
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      const int32_t v = static_cast<int32_t>(lit.GetAsInt64(i));
      std::memcpy(out.data() + i * 4, &v, 4);
    }
    return out;
  }
  return std::string(reinterpret_cast<const char*>(lit.raw()),
                     static_cast<size_t>(lit.size_bytes()));
}

StatusOr<hlo::Literal> LiteralFromDevice(const hlo::Shape& shape, const std::string& bytes) {
  TPUSIM_ASSIGN_OR_RETURN(hlo::Literal lit, hlo::Literal::Create(shape));
  const int64_t want = Narrowed(shape.element_type()) ? lit.element_count() * 4 : lit.size_bytes();
  if (static_cast<int64_t>(bytes.size()) != want) {
    return Internal(
        fmt::format("{}: {} device bytes for {} expected", shape.ToString(), bytes.size(), want));
  }
  if (Narrowed(shape.element_type())) {
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      int32_t v;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      lit.SetFromDouble(i, static_cast<double>(v));
    }
  } else if (lit.size_bytes() > 0) {
    std::memcpy(lit.mutable_raw(), bytes.data(), static_cast<size_t>(lit.size_bytes()));
  }
  return lit;
}

}  // namespace tpusim::compiler
