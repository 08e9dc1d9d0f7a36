#include "hlo/eval/literal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "hlo/eval/convert.h"

namespace tpusim::hlo {
namespace {

// Total bytes of the array leaves of `shape`, saturating; error for unsupported or dynamic shapes.
StatusOr<int64_t> CheckedByteSize(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t b, CheckedByteSize(s));
      total = (total > INT64_MAX - b) ? INT64_MAX : total + b;
    }
    return total;
  }
  if (shape.IsToken()) return int64_t{0};
  if (!IsEvaluatorType(shape.element_type())) {
    return Unimplemented(fmt::format("the CPU evaluator does not support element type {} (in {})",
                                     PrimitiveTypeName(shape.element_type()), shape.ToString()));
  }
  for (int64_t d : shape.dimensions()) {
    if (d < 0) {
      return InvalidArgument(
          fmt::format("cannot evaluate a value of unbounded dynamic shape {}", shape.ToString()));
    }
  }
  // s4/u4: one element per byte (int4.h), where Shape::ByteSize counts XLA's packed size.
  if (BitWidth(shape.element_type()) < 8) return shape.ElementCount();
  return shape.ByteSize();
}

}  // namespace

Literal::Literal() = default;

StatusOr<Literal> Literal::Create(const Shape& shape, int64_t max_bytes) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(shape));
  if (bytes > max_bytes) {
    return ResourceExhausted(fmt::format("{} needs {} bytes, over the limit of {} bytes",
                                         shape.ToString(false), bytes, max_bytes));
  }
  Literal lit;
  lit.shape_ = shape;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      TPUSIM_ASSIGN_OR_RETURN(Literal e, Create(s, max_bytes));
      lit.tuple_.push_back(std::move(e));
    }
    return lit;
  }
  if (shape.IsToken()) return lit;
  lit.element_count_ = shape.ElementCount();
  lit.buffer_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(bytes), uint8_t{0});
  return lit;
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  Literal lit;
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  lit.shape_ = Shape::Tuple(std::move(shapes));
  lit.tuple_ = std::move(elements);
  return lit;
}

Literal Literal::MakeToken() {
  Literal lit;
  lit.shape_ = Shape::Token();
  return lit;
}

std::vector<const Literal*> Literal::Leaves() const {
  std::vector<const Literal*> out;
  if (IsTuple()) {
    for (const Literal& e : tuple_) {
      for (const Literal* l : e.Leaves()) out.push_back(l);
    }
  } else if (IsArray()) {
    out.push_back(this);
  }
  return out;
}

uint8_t* Literal::mutable_raw() {
  if (!buffer_) return nullptr;
  if (buffer_.use_count() > 1) buffer_ = std::make_shared<std::vector<uint8_t>>(*buffer_);
  return buffer_->data();
}

int64_t Literal::LinearIndex(std::span<const int64_t> index) const {
  TPUSIM_CHECK(static_cast<int64_t>(index.size()) == shape_.rank())
      << "index of rank " << index.size() << " into " << shape_.ToString();
  int64_t linear = 0;
  for (int64_t k = 0; k < shape_.rank(); ++k) {
    int64_t d = shape_.dimensions(k);
    TPUSIM_CHECK(index[static_cast<size_t>(k)] >= 0 && index[static_cast<size_t>(k)] < d)
        << "index out of bounds in " << shape_.ToString();
    linear = linear * d + index[static_cast<size_t>(k)];
  }
  return linear;
}

int64_t Literal::component_count() const {
  return IsComplex(element_type()) ? 2 * element_count_ : element_count_;
}

double Literal::GetComponentAsDouble(int64_t j) const {
  if (element_type() == PrimitiveType::kC64) return reinterpret_cast<const float*>(raw())[j];
  if (element_type() == PrimitiveType::kC128) return reinterpret_cast<const double*>(raw())[j];
  return GetAsDouble(j);
}

void Literal::ComponentsAsDouble(int64_t begin, int64_t n, double* out) const {
  TPUSIM_CHECK(begin >= 0 && n >= 0 && begin + n <= component_count())
      << "components [" << begin << ", " << begin + n << ") of " << shape_.ToString();
  if (element_type() == PrimitiveType::kC64) {
    const float* p = reinterpret_cast<const float*>(raw()) + begin;
    std::copy(p, p + n, out);
    return;
  }
  if (element_type() == PrimitiveType::kC128) {
    const double* p = reinterpret_cast<const double*>(raw()) + begin;
    std::copy(p, p + n, out);
    return;
  }
  PrimitiveTypeSwitch(element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = data<T>() + begin;
    for (int64_t k = 0; k < n; ++k) out[k] = ToDouble(p[k]);
  });
}

void Literal::SetComponentFromDouble(int64_t j, double v) {
  if (element_type() == PrimitiveType::kC64) {
    reinterpret_cast<float*>(mutable_raw())[j] = static_cast<float>(v);
  } else if (element_type() == PrimitiveType::kC128) {
    reinterpret_cast<double*>(mutable_raw())[j] = v;
  } else {
    SetFromDouble(j, v);
  }
}

double Literal::GetAsDouble(int64_t i) const {
  if (IsComplex(element_type())) return GetComponentAsDouble(2 * i);
  return PrimitiveTypeSwitch(element_type(), [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return ToDouble(data<T>()[i]);
  });
}

int64_t Literal::GetAsInt64(int64_t i) const {
  if (IsComplex(element_type())) return SaturatingFloatToInt<int64_t>(GetAsDouble(i));
  return PrimitiveTypeSwitch(element_type(), [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      return SaturatingFloatToInt<int64_t>(ToDouble(data<T>()[i]));
    } else {
      return static_cast<int64_t>(data<T>()[i]);
    }
  });
}

void Literal::SetFromDouble(int64_t i, double v) {
  if (IsComplex(element_type())) {
    SetComponentFromDouble(2 * i, v);
    SetComponentFromDouble(2 * i + 1, 0.0);
    return;
  }
  PrimitiveTypeSwitch(element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    mutable_data<T>()[i] = ConvertElement<T>(v);
  });
}

bool Literal::BitwiseEqual(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].BitwiseEqual(other.tuple_[i])) return false;
    }
    return true;
  }
  if (size_bytes() != other.size_bytes()) return false;
  return size_bytes() == 0 ||
         std::memcmp(raw(), other.raw(), static_cast<size_t>(size_bytes())) == 0;
}

uint64_t Fnv1a64(std::string_view s, uint64_t h) {
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t Literal::Checksum() const {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Literal* leaf : Leaves()) {
    const uint8_t* p = leaf->raw();
    for (int64_t i = 0; i < leaf->size_bytes(); ++i) {
      h ^= p[i];
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

std::string Literal::ToString(int64_t max_elements) const {
  if (IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) s += ", ";
      s += tuple_[i].ToString(max_elements);
    }
    return s + ")";
  }
  if (IsToken()) return "token[]";
  std::ostringstream os;
  os << shape_.ToString(false) << " {";
  int64_t n = std::min(element_count_, max_elements);
  for (int64_t i = 0; i < n; ++i) {
    if (i) os << ", ";
    if (IsComplex(element_type())) {
      os << fmt::format("({}, {})", GetComponentAsDouble(2 * i), GetComponentAsDouble(2 * i + 1));
    } else if (element_type() == PrimitiveType::kPred) {
      os << (GetAsInt64(i) ? "true" : "false");
    } else if (IsFloatingPoint(element_type())) {
      os << fmt::format("{}", GetAsDouble(i));
    } else if (element_type() == PrimitiveType::kU64) {
      os << data<uint64_t>()[i];
    } else {
      os << GetAsInt64(i);
    }
  }
  if (element_count_ > n) os << ", ...";
  os << "}";
  return os.str();
}

void Literal::ReshapeInPlace(const Shape& shape) {
  TPUSIM_CHECK(shape.IsArray() && shape.element_type() == element_type() &&
               shape.ElementCount() == element_count_)
      << "ReshapeInPlace " << shape_.ToString() << " -> " << shape.ToString();
  shape_ = shape;
}

StatusOr<Literal> ConvertLiteral(const Literal& in, PrimitiveType type, int64_t max_bytes) {
  Shape shape = in.shape();
  shape.set_element_type(type);
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(shape, max_bytes));
  const int64_t n = in.element_count();
  if (IsComplex(in.element_type()) || IsComplex(type)) {
    if (!IsComplex(type)) {
      return InvalidArgument(fmt::format("convert from complex {} to real {} is not defined",
                                         PrimitiveTypeName(in.element_type()),
                                         PrimitiveTypeName(type)));
    }
    if (IsComplex(in.element_type())) {
      for (int64_t j = 0; j < 2 * n; ++j) out.SetComponentFromDouble(j, in.GetComponentAsDouble(j));
      return out;
    }
    // real -> complex: the value converted to the component type, imaginary part 0.
    TPUSIM_ASSIGN_OR_RETURN(Literal re, ConvertLiteral(in, ComplexComponentType(type), max_bytes));
    for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, re.GetAsDouble(i));
    return out;
  }
  PrimitiveTypeSwitch(in.element_type(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    PrimitiveTypeSwitch(type, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = in.data<From>();
      To* dst = out.mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertElement<To>(src[i]);
    });
  });
  return out;
}

namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void FillLeaf(Literal& lit, uint64_t& state) {
  const int64_t n = lit.element_count();
  if (IsComplex(lit.element_type())) {  // both parts uniform in [-1, 1), real part first
    for (int64_t j = 0; j < 2 * n; ++j) {
      const double u = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;
      lit.SetComponentFromDouble(j, 2.0 * u - 1.0);
    }
    return;
  }
  PrimitiveTypeSwitch(lit.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = lit.mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = SplitMix64(state);
      if constexpr (std::is_same_v<T, bool>) {
        d[i] = (bits >> 63) != 0;
      } else if constexpr (kIsFloat<T>) {
        double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
        d[i] = ConvertElement<T>(2.0 * u - 1.0);
      } else if constexpr (std::is_signed_v<T>) {
        d[i] = static_cast<T>(static_cast<int64_t>(bits >> 60) - 8);
      } else {
        d[i] = static_cast<T>(bits >> 60);
      }
    }
  });
}

void FillRecursive(Literal& lit, uint64_t& state) {
  if (lit.IsTuple()) {
    for (int64_t i = 0; i < lit.tuple_size(); ++i) FillRecursive(lit.mutable_element(i), state);
  } else if (lit.IsArray()) {
    FillLeaf(lit, state);
  }
}

}  // namespace

void FillRandom(Literal& literal, uint64_t seed, std::string_view salt) {
  uint64_t state = seed ^ Fnv1a64(salt);
  FillRecursive(literal, state);
}

}  // namespace tpusim::hlo
