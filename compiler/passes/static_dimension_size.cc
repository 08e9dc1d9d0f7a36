#include "compiler/passes/static_dimension_size.h"

#include <optional>
#include <vector>

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

// The size operand's value, when it is an integer scalar constant.
std::optional<int64_t> ConstantSize(const HloInstruction& n) {
  if (n.opcode() != HloOpcode::kConstant || !n.shape().IsArray() || n.shape().rank() != 0 ||
      n.literal().int_values.size() != 1) {
    return std::nullopt;
  }
  return n.literal().int_values[0];
}

bool IsStaticSetDimensionSize(const HloInstruction& s) {
  if (s.opcode() != HloOpcode::kSetDimensionSize || s.operand_count() != 2 ||
      s.dimensions().size() != 1 || !s.operand(0)->shape().IsArray()) {
    return false;
  }
  const Shape& x = s.operand(0)->shape();
  const int64_t d = s.dimensions(0);
  if (d < 0 || d >= x.rank() || x.is_dynamic_dimension(d)) return false;
  const std::optional<int64_t> n = ConstantSize(*s.operand(1));
  return n.has_value() && *n == x.dimensions(d);
}

bool HasDynamicBound(const Shape& shape) {
  for (const Shape* leaf : shape.Leaves()) {
    for (int64_t i = 0; i < leaf->rank(); ++i) {
      if (leaf->is_dynamic_dimension(i)) return true;
    }
  }
  return false;
}

// An instruction that makes a size dynamic rather than passing one on.
bool IsDynamicSource(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kDynamicReshape:
      return true;
    case HloOpcode::kParameter:
      return HasDynamicBound(i.shape());
    default:
      return false;
  }
}

// `<=N` dimensions become N; `?` (unbounded) dimensions stay.
bool MakeStatic(Shape& shape) {
  bool changed = false;
  if (shape.IsTuple()) {
    for (Shape& e : shape.mutable_tuple_shapes()) changed = MakeStatic(e) || changed;
    return changed;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.is_dynamic_dimension(i) && shape.dimensions(i) >= 0) {
      shape.set_dynamic_dimension(i, false);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

StatusOr<bool> StaticDimensionSize::Run(hlo::HloModule& module) {
  bool changed = false;
  bool dynamic_left = false;
  for (const auto& comp : module.computations()) {
    std::vector<HloInstruction*> todo;
    for (const auto& i : comp->instructions()) {
      if (IsStaticSetDimensionSize(*i)) todo.push_back(i.get());
    }
    for (HloInstruction* s : todo) {
      s->ReplaceAllUsesWith(s->operand(0));
      comp->RemoveInstruction(s);
      changed = true;
    }
    for (const auto& i : comp->instructions()) dynamic_left = dynamic_left || IsDynamicSource(*i);
  }
  if (!changed || dynamic_left) return changed;
  for (const auto& comp : module.computations()) {
    for (const auto& i : comp->instructions()) MakeStatic(i->mutable_shape());
  }
  return true;
}

}  // namespace tpusim::compiler
