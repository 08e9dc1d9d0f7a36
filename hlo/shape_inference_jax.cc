#include "hlo/shape_inference_jax.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace tpusim::hlo {
namespace {

Status Err(std::string message) { return InvalidArgument(std::move(message)); }

Status ExpectOperands(const HloInstruction& inst, int64_t n) {
  if (inst.operand_count() != n) {
    return Err(fmt::format("expects {} operand(s), has {}", n, inst.operand_count()));
  }
  return OkStatus();
}

// The one dimension `dimensions={d}` names in operand 0 (an array).
StatusOr<int64_t> SizeDimension(const HloInstruction& inst) {
  const Shape& x = inst.operand(0)->shape();
  if (!x.IsArray()) return Err(fmt::format("operand 0 must be an array, got {}", x.ToString(false)));
  if (inst.dimensions().size() != 1) {
    return Err(fmt::format("needs dimensions={{d}} (one dimension), has {}",
                           inst.dimensions().size()));
  }
  const int64_t d = inst.dimensions(0);
  if (d < 0 || d >= x.rank()) {
    return Err(fmt::format("dimension {} is out of range for {} (rank {})", d, x.ToString(false),
                           x.rank()));
  }
  return d;
}

bool IsOffsetType(PrimitiveType t) { return t == PrimitiveType::kS32 || t == PrimitiveType::kS64; }

}  // namespace

StatusOr<Shape> InferGetDimensionSize(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t d, SizeDimension(inst));
  const int64_t size = inst.operand(0)->shape().dimensions(d);
  if (size > std::numeric_limits<int32_t>::max()) {
    return Err(fmt::format("dimension {} of {} is {}, more than the s32 result holds", d,
                           inst.operand(0)->shape().ToString(false), size));
  }
  return Shape::Scalar(PrimitiveType::kS32);
}

StatusOr<Shape> InferSetDimensionSize(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 2));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t d, SizeDimension(inst));
  const Shape& size = inst.operand(1)->shape();
  if (!size.IsArray() || size.rank() != 0 || size.element_type() != PrimitiveType::kS32) {
    return Err(fmt::format("the size (operand 1) must be an s32 scalar, got {}",
                           size.ToString(false)));
  }
  Shape out = inst.operand(0)->shape();
  out.set_dynamic_dimension(d, true);
  return out;
}

StatusOr<Shape> InferRaggedAllToAll(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 6));
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.operand(1)->shape();
  if (!in.IsArray() || !out.IsArray() || in.rank() == 0 || out.rank() == 0) {
    return Err(fmt::format("input and output (operands 0, 1) must be arrays of rank >= 1, got {} "
                           "and {}",
                           in.ToString(false), out.ToString(false)));
  }
  bool same_rows = in.element_type() == out.element_type() && in.rank() == out.rank();
  for (int64_t i = 1; same_rows && i < in.rank(); ++i) {
    same_rows = in.dimensions(i) == out.dimensions(i);
  }
  if (!same_rows) {
    return Err(fmt::format("input {} and output {} must have one element type and equal "
                           "dimensions but the first (rows)",
                           in.ToString(false), out.ToString(false)));
  }
  const Shape& first = inst.operand(2)->shape();
  for (int64_t k = 2; k < 6; ++k) {
    const Shape& s = inst.operand(k)->shape();
    if (!s.IsArray() || !IsOffsetType(s.element_type()) || s.rank() < 1 || s.rank() > 2 ||
        !s.Compatible(first)) {
      return Err(fmt::format("the offsets and sizes (operands 2-5) must be s32 or s64 arrays of "
                             "rank 1 or 2, all of one shape; operand {} is {}{}",
                             k, s.ToString(false),
                             k == 2 ? "" : ", operand 2 " + first.ToString(false)));
    }
  }
  return out;
}

StatusOr<Shape> InferRngBitGenerator(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& state = inst.operand(0)->shape();
  const Shape& written = inst.shape();
  const bool ok = state.IsArray() && state.element_type() == PrimitiveType::kU64 &&
                  state.rank() == 1 && state.dimensions(0) >= 1 && written.IsTuple() &&
                  written.tuple_shapes_size() == 2 && written.tuple_shapes(0).Compatible(state) &&
                  written.tuple_shapes(1).IsArray() &&
                  IsInteger(written.tuple_shapes(1).element_type());
  if (!ok) {
    return Err(fmt::format("state {} and result {} are not u64[n] and (u64[n], an integer array)",
                           state.ToString(false), written.ToString(false)));
  }
  return written;
}

}  // namespace tpusim::hlo
