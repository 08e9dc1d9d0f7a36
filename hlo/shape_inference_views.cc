#include "hlo/shape_inference_views.h"

#include <fmt/format.h>

namespace tpusim::hlo {
namespace {

Status Err(std::string message) { return InvalidArgument(std::move(message)); }

}  // namespace

StatusOr<Shape> InferBitcast(const HloInstruction& inst) {
  if (inst.operand_count() != 1) {
    return Err(fmt::format("expects 1 operand, has {}", inst.operand_count()));
  }
  const Shape& x = inst.operand(0)->shape();
  const Shape& w = inst.shape();
  if (!x.IsArray() || !w.IsArray() || x.ByteSize() != w.ByteSize()) {
    return Err(fmt::format("bitcast from {} ({} bytes) to {} ({} bytes) changes the byte size",
                           x.ToString(false), x.IsArray() ? x.ByteSize() : 0, w.ToString(false),
                           w.IsArray() ? w.ByteSize() : 0));
  }
  return w;
}

StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst) {
  if (inst.operand_count() != 1) {
    return Err(fmt::format("expects 1 operand, has {}", inst.operand_count()));
  }
  const Shape& x = inst.operand(0)->shape();
  const Shape& w = inst.shape();
  if (!x.IsArray() || !w.IsArray()) {
    return Err(fmt::format("bitcast-convert from {} to {}: both must be arrays", x.ToString(false),
                           w.ToString(false)));
  }
  const int from = BitWidth(x.element_type()), to = BitWidth(w.element_type());
  std::vector<int64_t> dims = x.dimensions();
  if (to < from) {
    if (to <= 0 || from % to != 0) {
      return Err(fmt::format("bitcast-convert from {} to {}: widths {} and {} do not divide",
                             x.ToString(false), w.ToString(false), from, to));
    }
    dims.push_back(from / to);
  } else if (to > from) {
    if (from <= 0 || to % from != 0 || dims.empty() || dims.back() != to / from) {
      return Err(fmt::format("bitcast-convert from {} to {} needs a last dimension of {} (the "
                             "width ratio)",
                             x.ToString(false), w.ToString(false),
                             from > 0 ? to / from : 0));
    }
    dims.pop_back();
  }
  return Shape(w.element_type(), std::move(dims));
}

StatusOr<Shape> InferDynamicReshape(const HloInstruction& inst) {
  const Shape& w = inst.shape();
  if (inst.operand_count() < 1 || !w.IsArray() || inst.operand_count() != 1 + w.rank()) {
    return Err(fmt::format("needs the operand and one size per dimension of {} ({} operands), "
                           "has {}",
                           w.ToString(false), 1 + (w.IsArray() ? w.rank() : 0),
                           inst.operand_count()));
  }
  const Shape& x = inst.operand(0)->shape();
  if (!x.IsArray() || x.element_type() != w.element_type() ||
      w.ElementCount() > x.ElementCount()) {
    return Err(fmt::format("dynamic-reshape of {} to {}: the result must have the operand's "
                           "element type and at most its elements",
                           x.ToString(false), w.ToString(false)));
  }
  for (int64_t k = 1; k < inst.operand_count(); ++k) {
    const Shape& s = inst.operand(k)->shape();
    if (!s.IsArray() || s.rank() != 0 || s.element_type() != PrimitiveType::kS32) {
      return Err(fmt::format("size operand {} must be an s32 scalar, got {}", k,
                             s.ToString(false)));
    }
  }
  return w;
}

}  // namespace tpusim::hlo
