// Literal: an HLO value on the host — a Shape plus dense element storage for an array, or a tuple
// of Literals — as the CPU evaluator (evaluator.h) computes it.
//
// Storage is row-major in *logical* index order whatever the shape's layout: layouts change where
// bytes sit in device memory, never values, so only printing and DMA care about them. Element i of
// an array of dims [d0,...,dn-1] is at linear index sum_k idx[k] * prod_{j>k} d_j.
//
// Array storage is shared copy-on-write, so copying a Literal (get-tuple-element, tuple, copy,
// bitcast, reshape) costs no element copies; mutable accessors copy the buffer first when it is
// shared. A Literal is not synchronized: concurrent mutation of one Literal from several threads is
// not allowed (the evaluator's worker threads write disjoint ranges of a buffer they obtained
// through mutable_data() before starting them).
//
// Allocation is bounded: Create() refuses a shape whose bytes exceed `max_bytes` with
// ResourceExhausted naming the shape and the limit, so a real module with f32[1024,32,4096,4096] is
// reported, not allocated.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/status.h"
#include "hlo/eval/native_types.h"
#include "hlo/shape.h"

namespace tpusim::hlo {

class Literal {
 public:
  /// Default limit of one Create() call: 4 GiB.
  static constexpr int64_t kDefaultMaxBytes = int64_t{4} << 30;

  /// An empty tuple `()`.
  Literal();

  /// A zero-filled literal of `shape` (arrays, tuples of arrays, tokens). ResourceExhausted if the
  /// total bytes exceed `max_bytes` ("f32[1024,32,4096,4096] needs 549755813888 bytes, over the
  /// limit of ..."); Unimplemented for element types the evaluator does not support (s4, complex,
  /// f8, ...); InvalidArgument for dynamic ('?') dimensions.
  static StatusOr<Literal> Create(const Shape& shape, int64_t max_bytes = kDefaultMaxBytes);
  /// A tuple owning `elements`.
  static Literal MakeTuple(std::vector<Literal> elements);
  /// A token (after-all, infeed tokens): no storage.
  static Literal MakeToken();
  /// A scalar of native type T.
  template <typename T>
  static Literal Scalar(T value);
  /// An array of `dims` holding `values` (row-major; size must equal the element count, checked).
  template <typename T>
  static Literal FromVector(std::vector<int64_t> dims, const std::vector<T>& values);

  const Shape& shape() const { return shape_; }
  PrimitiveType element_type() const { return shape_.element_type(); }
  bool IsTuple() const { return shape_.IsTuple(); }
  bool IsToken() const { return shape_.IsToken(); }
  bool IsArray() const { return shape_.IsArray(); }

  // Tuples.
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }
  const Literal& element(int64_t i) const { return tuple_.at(static_cast<size_t>(i)); }
  Literal& mutable_element(int64_t i) { return tuple_.at(static_cast<size_t>(i)); }
  const std::vector<Literal>& elements() const { return tuple_; }
  /// Array leaves in flattened (depth-first) tuple order; {this} for an array; tokens are skipped.
  std::vector<const Literal*> Leaves() const;

  // Arrays.
  int64_t element_count() const { return element_count_; }
  int64_t size_bytes() const { return buffer_ ? static_cast<int64_t>(buffer_->size()) : 0; }
  const uint8_t* raw() const { return buffer_ ? buffer_->data() : nullptr; }
  uint8_t* mutable_raw();
  /// Typed views; T must be the native type of element_type() (checked).
  template <typename T>
  const T* data() const {
    TPUSIM_CHECK(PrimitiveTypeOf<T>() == element_type())
        << "Literal::data<" << PrimitiveTypeName(PrimitiveTypeOf<T>()) << "> on "
        << shape_.ToString();
    return reinterpret_cast<const T*>(raw());
  }
  template <typename T>
  T* mutable_data() {
    TPUSIM_CHECK(PrimitiveTypeOf<T>() == element_type())
        << "Literal::mutable_data<" << PrimitiveTypeName(PrimitiveTypeOf<T>()) << "> on "
        << shape_.ToString();
    return reinterpret_cast<T*>(mutable_raw());
  }
  template <typename T>
  T Get(std::span<const int64_t> index) const {
    return data<T>()[LinearIndex(index)];
  }
  template <typename T>
  void Set(std::span<const int64_t> index, T value) {
    mutable_data<T>()[LinearIndex(index)] = value;
  }
  /// Row-major linear index of a multi-index (bounds checked).
  int64_t LinearIndex(std::span<const int64_t> index) const;
  /// Element `i` converted to double / int64 whatever the element type (for indices and printing).
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  /// Sets element `i` from a double with convert's rules (float->int saturates; complex: (v, 0)).
  void SetFromDouble(int64_t i, double v);
  /// Complex arrays as 2 x element_count() real components (element i = components 2i, 2i+1: real,
  /// imaginary); other arrays as their elements. GetAsDouble of a complex element is its real part.
  int64_t component_count() const;
  double GetComponentAsDouble(int64_t j) const;
  /// out[k] = GetComponentAsDouble(begin + k) for k < n, the element type's case chosen once
  /// (begin + n <= component_count(); checked).
  void ComponentsAsDouble(int64_t begin, int64_t n, double* out) const;
  void SetComponentFromDouble(int64_t j, double v);

  /// Same shape (ignoring layout) and identical bytes of every leaf (so NaN == NaN with the same
  /// bits, and +0 != -0).
  bool BitwiseEqual(const Literal& other) const;
  /// 64-bit FNV-1a of the element bytes of every leaf in flattened order, little-endian, logical
  /// order.
  uint64_t Checksum() const;
  /// "f32[2,2] {1, 2, 3, 4}" (at most `max_elements` values per leaf, then "...").
  std::string ToString(int64_t max_elements = 16) const;

  /// Replaces the shape by `shape` with the same element type and count (reshape / bitcast); no
  /// copy.
  void ReshapeInPlace(const Shape& shape);

 private:
  Shape shape_ = Shape::Tuple({});
  int64_t element_count_ = 0;
  std::shared_ptr<std::vector<uint8_t>> buffer_;  // arrays only
  std::vector<Literal> tuple_;                    // tuples only
};

/// Converts every element of an array literal to `type` with XLA's convert rules (convert.h); a
/// real value becomes the real part of a complex one (imaginary 0), c64 <-> c128 convert both parts.
/// InvalidArgument for complex -> real (XLA does not define it).
StatusOr<Literal> ConvertLiteral(const Literal& in, PrimitiveType type,
                                 int64_t max_bytes = Literal::kDefaultMaxBytes);

/// Fills every array leaf with deterministic pseudo-random values from (seed, salt): floats (and
/// both parts of complex values) uniform in [-1, 1) rounded to the type, signed ints in [-8, 8), unsigned in [0, 16), pred true/false with
/// probability 1/2. The generator is SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014) seeded with seed ^ FNV-1a(salt); the same (seed, salt) gives
/// the same bits.
void FillRandom(Literal& literal, uint64_t seed, std::string_view salt);

/// The seed of every elided constant (`constant({...})`): FillRandom(kElidedConstantSeed, name).
/// compiler/lower/constant_data.h generates the same values for the device (its own copy of the
/// generator, as the compiler does not link the evaluator; tests/compiler/checks_*_test.cc pins the
/// two together).
inline constexpr uint64_t kElidedConstantSeed = 0;

/// FNV-1a 64 of a string (used to turn instruction names into seeds).
uint64_t Fnv1a64(std::string_view s, uint64_t h = 0xcbf29ce484222325ull);

template <typename T>
Literal Literal::Scalar(T value) {
  auto lit = Create(Shape(PrimitiveTypeOf<T>(), {}));
  TPUSIM_CHECK(lit.ok()) << lit.status().message();
  lit->mutable_data<T>()[0] = value;
  return std::move(lit).value();
}

template <typename T>
Literal Literal::FromVector(std::vector<int64_t> dims, const std::vector<T>& values) {
  auto lit = Create(Shape(PrimitiveTypeOf<T>(), std::move(dims)));
  TPUSIM_CHECK(lit.ok()) << lit.status().message();
  TPUSIM_CHECK(static_cast<int64_t>(values.size()) == lit->element_count())
      << values.size() << " values for " << lit->shape().ToString();
  T* d = lit->mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) d[i] = values[i];
  return std::move(lit).value();
}

}  // namespace tpusim::hlo
