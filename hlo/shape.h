// HLO element types and shapes, in XLA's terms (xla/shape.h, xla/xla_data.proto).
//
// Shapes are symbolic: a Shape records element type, dimensions, layout and tuple structure only,
// so a shape such as f32[1024,32,4096,4096] costs a few bytes whatever its logical size. Values
// live in Literal (literal.h), which only the CPU evaluator and the functional check create.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/float8.h"

namespace tpusim::hlo {

/// Element types, spelled as XLA prints them. kToken and kOpaque are XLA's non-array types; kTuple
/// marks a tuple shape.
enum class PrimitiveType {
  kInvalid,
  kPred,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF8E5M2,
  kF8E4M3FN,
  kF8E4M3,
  kF8E3M4,
  kF8E4M3FNUZ,
  kF8E5M2FNUZ,
  kF8E4M3B11FNUZ,
  kF8E8M0FNU,
  kToken,
  kOpaque,
  kTuple,
};

/// "f32", "bf16", "pred", ... as in HLO text.
std::string_view PrimitiveTypeName(PrimitiveType t);
/// Parses an HLO type name; nullopt if unknown.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);
/// Size of one element in bits (pred: 8, as XLA stores it; s4/u4: 4). 0 for token/opaque/tuple.
int BitWidth(PrimitiveType t);
/// Size of one element in bytes, rounded up (s4 -> 1). 0 for token/opaque/tuple.
int ByteWidth(PrimitiveType t);
bool IsFloatingPoint(PrimitiveType t);  // f16, bf16, f32, f64, f8*
/// The 8-bit float format of an f8 type (common/float8.h); nullopt for every other type.
std::optional<Float8Format> Float8FormatOf(PrimitiveType t);
bool IsFloat8(PrimitiveType t);  // Float8FormatOf(t) has a value
bool IsSignedInteger(PrimitiveType t);
bool IsUnsignedInteger(PrimitiveType t);
bool IsInteger(PrimitiveType t);  // signed or unsigned
bool IsComplex(PrimitiveType t);
/// The type of one part of a complex element: c64 -> f32, c128 -> f64 (t itself otherwise).
PrimitiveType ComplexComponentType(PrimitiveType t);
bool IsArrayType(PrimitiveType t);  // not token, opaque, tuple, invalid

/// One level of a tiled layout, e.g. T(8,128) -> {8,128}.
struct Tile {
  std::vector<int64_t> dims;
  bool operator==(const Tile&) const = default;
};

/// A layout: minor_to_major order plus the optional TPU attributes (tiling T(..), element size
/// E(n), memory space S(n)). Attributes tpusim does not model are kept as text in `extra` so
/// printing is lossless.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<Tile> tiles;
  int64_t element_size_in_bits = 0;  // E(n); 0 = default
  int64_t memory_space = 0;          // S(n); 0 = default (HBM on TPU)
  std::string extra;                 // other ':'-attributes verbatim, e.g. "D(...)"
  bool operator==(const Layout&) const = default;
};

/// An array, tuple, token or opaque shape.
class Shape {
 public:
  Shape() = default;
  /// An array shape with no layout (`f32[2,3]`).
  Shape(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Scalar(PrimitiveType type) { return Shape(type, {}); }
  static Shape Token() { return Shape(PrimitiveType::kToken, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }

  // Array shapes.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  std::vector<int64_t>& mutable_dimensions() { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  /// is_dynamic_dimension(i): the dim was written `<=N` (bounded; dims_[i] holds N) or `?`
  /// (dims_[i] = -1).
  bool is_dynamic_dimension(int64_t i) const;
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_; }
  void set_dynamic_dimension(int64_t i, bool dynamic);
  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const;
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }

  // Tuple shapes.
  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[static_cast<size_t>(i)]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_.size()); }

  /// Product of the dimensions (1 for a scalar); arrays only. Saturates at INT64_MAX instead of
  /// overflowing, so absurd shapes are reported, not wrapped.
  int64_t ElementCount() const;
  /// ElementCount() * element size; for a tuple the sum over its leaves. Saturating.
  int64_t ByteSize() const;
  /// Array leaves in flattened (depth-first) tuple order; {*this} for an array.
  std::vector<const Shape*> Leaves() const;

  /// HLO text: "f32[2,3]{1,0}", "(f32[], s32[4]{0})", "bf16[8,128]{1,0:T(8,128)(2,1)}".
  /// With print_layout false the layout is left out ("f32[2,3]").
  std::string ToString(bool print_layout = true) const;

  /// Equal element type, dims and tuple structure, ignoring layouts (ShapeUtil::Compatible).
  bool Compatible(const Shape& other) const;
  /// Equal including layouts.
  bool operator==(const Shape& other) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;  // empty or same size as dims_
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_;
};

/// The default (row-major, {rank-1,...,0}) minor_to_major order for `rank`.
std::vector<int64_t> DefaultMinorToMajor(int64_t rank);

/// True if `pred(element_type)` holds for some leaf of `s` (s itself when it is not a tuple; the
/// leaves of nested tuples too).
template <typename Pred>
bool AnyLeafType(const Shape& s, Pred pred) {
  if (!s.IsTuple()) return pred(s.element_type());
  for (const Shape& e : s.tuple_shapes()) {
    if (AnyLeafType(e, pred)) return true;
  }
  return false;
}

}  // namespace tpusim::hlo
