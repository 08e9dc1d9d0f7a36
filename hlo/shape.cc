#include "hlo/shape.h"

#include <array>
#include <limits>
#include <utility>

#include "common/check.h"

namespace tpusim::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, 28> kTypes = {{
    {PrimitiveType::kPred, "pred", 8},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kOpaque, "opaque", 0},
    {PrimitiveType::kTuple, "tuple", 0},
}};

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

void CollectLeaves(const Shape& s, std::vector<const Shape*>& out) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) CollectLeaves(e, out);
  } else {
    out.push_back(&s);
  }
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType t) {
  for (const auto& info : kTypes) {
    if (info.type == t) return info.name;
  }
  return "invalid";
}

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  for (const auto& info : kTypes) {
    if (info.name == name && info.type != PrimitiveType::kTuple) return info.type;
  }
  return std::nullopt;
}

int BitWidth(PrimitiveType t) {
  if (t == PrimitiveType::kTuple) return 0;
  for (const auto& info : kTypes) {
    if (info.type == t) return info.bits;
  }
  return 0;
}

int ByteWidth(PrimitiveType t) { return (BitWidth(t) + 7) / 8; }

bool IsFloatingPoint(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
      return true;
    default:
      return IsFloat8(t);
  }
}

std::optional<Float8Format> Float8FormatOf(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF8E4M3FN:
      return Float8Format::kE4M3FN;
    case PrimitiveType::kF8E5M2:
      return Float8Format::kE5M2;
    case PrimitiveType::kF8E4M3:
      return Float8Format::kE4M3;
    case PrimitiveType::kF8E3M4:
      return Float8Format::kE3M4;
    case PrimitiveType::kF8E4M3FNUZ:
      return Float8Format::kE4M3FNUZ;
    case PrimitiveType::kF8E5M2FNUZ:
      return Float8Format::kE5M2FNUZ;
    case PrimitiveType::kF8E4M3B11FNUZ:
      return Float8Format::kE4M3B11FNUZ;
    case PrimitiveType::kF8E8M0FNU:
      return Float8Format::kE8M0FNU;
    default:
      return std::nullopt;
  }
}

bool IsFloat8(PrimitiveType t) { return Float8FormatOf(t).has_value(); }

bool IsSignedInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kU4:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsInteger(PrimitiveType t) { return IsSignedInteger(t) || IsUnsignedInteger(t); }
bool IsComplex(PrimitiveType t) { return t == PrimitiveType::kC64 || t == PrimitiveType::kC128; }
PrimitiveType ComplexComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}
bool IsArrayType(PrimitiveType t) {
  return t != PrimitiveType::kInvalid && t != PrimitiveType::kToken &&
         t != PrimitiveType::kOpaque && t != PrimitiveType::kTuple;
}

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims)
    : element_type_(type), dims_(std::move(dims)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::kTuple;
  s.tuple_ = std::move(elements);
  return s;
}

bool Shape::is_dynamic_dimension(int64_t i) const {
  return !dynamic_.empty() && dynamic_[static_cast<size_t>(i)];
}

void Shape::set_dynamic_dimension(int64_t i, bool dynamic) {
  if (dynamic_.size() != dims_.size()) dynamic_.assign(dims_.size(), false);
  dynamic_[static_cast<size_t>(i)] = dynamic;
}

const Layout& Shape::layout() const {
  TPUSIM_CHECK(layout_.has_value()) << "shape " << ToString() << " has no layout";
  return *layout_;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_) n = SaturatingMul(n, d < 0 ? 0 : d);
  return n;
}

int64_t Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& e : tuple_) total = SaturatingAdd(total, e.ByteSize());
    return total;
  }
  if (!IsArray()) return 0;
  if (BitWidth(element_type_) < 8) {
    return (SaturatingMul(ElementCount(), BitWidth(element_type_)) + 7) / 8;
  }
  return SaturatingMul(ElementCount(), ByteWidth(element_type_));
}

std::vector<const Shape*> Shape::Leaves() const {
  std::vector<const Shape*> out;
  CollectLeaves(*this, out);
  return out;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) s += ", ";
      s += tuple_[i].ToString(print_layout);
    }
    return s + ")";
  }
  std::string s(PrimitiveTypeName(element_type_));
  if (element_type_ == PrimitiveType::kToken || element_type_ == PrimitiveType::kOpaque) {
    return s + "[]";
  }
  s += "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    if (is_dynamic_dimension(static_cast<int64_t>(i))) {
      s += dims_[i] < 0 ? "?" : "<=" + std::to_string(dims_[i]);
    } else {
      s += std::to_string(dims_[i]);
    }
  }
  s += "]";
  if (print_layout && layout_.has_value()) {
    const Layout& l = *layout_;
    s += "{";
    for (size_t i = 0; i < l.minor_to_major.size(); ++i) {
      if (i) s += ",";
      s += std::to_string(l.minor_to_major[i]);
    }
    bool attrs =
        !l.tiles.empty() || l.element_size_in_bits != 0 || l.memory_space != 0 || !l.extra.empty();
    if (attrs) {
      s += ":";
      if (!l.tiles.empty()) {
        s += "T";
        for (const Tile& t : l.tiles) {
          s += "(";
          for (size_t j = 0; j < t.dims.size(); ++j) {
            if (j) s += ",";
            s += std::to_string(t.dims[j]);
          }
          s += ")";
        }
      }
      if (l.element_size_in_bits != 0) s += "E(" + std::to_string(l.element_size_in_bits) + ")";
      if (l.memory_space != 0) s += "S(" + std::to_string(l.memory_space) + ")";
      s += l.extra;
    }
    s += "}";
  }
  return s;
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(other.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == other.dims_;
}

bool Shape::operator==(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!(tuple_[i] == other.tuple_[i])) return false;
    }
    return true;
  }
  for (int64_t i = 0; i < rank(); ++i) {
    if (is_dynamic_dimension(i) != other.is_dynamic_dimension(i)) return false;
  }
  return layout_ == other.layout_;
}

std::vector<int64_t> DefaultMinorToMajor(int64_t rank) {
  std::vector<int64_t> m;
  for (int64_t i = rank - 1; i >= 0; --i) m.push_back(i);
  return m;
}

}  // namespace tpusim::hlo
