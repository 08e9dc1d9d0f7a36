#include "hlo/shape_inference_async.h"

#include <fmt/format.h>

#include "hlo/computation.h"

namespace tpusim::hlo {
namespace {

Status Mismatch(const HloInstruction& inst, const std::string& rule) {
  return InvalidArgument(fmt::format("{} is not {}", inst.shape().ToString(false), rule));
}

// copy-start, collective-permute-start: (x, x, context...).
StatusOr<Shape> InferCopyLikeStart(const HloInstruction& inst) {
  const Shape& x = inst.operand(0)->shape();
  const Shape& w = inst.shape();
  if (!w.IsTuple() || w.tuple_shapes_size() < 2 || !w.tuple_shapes(0).Compatible(x) ||
      !w.tuple_shapes(1).Compatible(x)) {
    return Mismatch(inst, fmt::format("({0}, {0}, context...), as its operand {0} gives",
                                      x.ToString(false)));
  }
  return w;
}

StatusOr<Shape> InferAllGatherStart(const HloInstruction& inst, int64_t group_size) {
  const Shape& x = inst.operand(0)->shape();
  const Shape& w = inst.shape();
  if (!x.IsArray() || x.rank() == 0 || inst.dimensions().size() != 1 ||
      inst.dimensions(0) < 0 || inst.dimensions(0) >= x.rank()) {
    return InvalidArgument(fmt::format("needs an array operand and dimensions={{d}} with d < its "
                                       "rank, got {}",
                                       x.ToString(false)));
  }
  const int64_t d = inst.dimensions(0);
  bool ok = w.IsTuple() && w.tuple_shapes_size() == 2 && w.tuple_shapes(0).Compatible(x);
  const Shape* g = ok ? &w.tuple_shapes(1) : nullptr;
  ok = ok && g->IsArray() && g->element_type() == x.element_type() && g->rank() == x.rank();
  for (int64_t i = 0; ok && i < x.rank(); ++i) {
    const int64_t got = g->dimensions(i), have = x.dimensions(i);
    if (i != d) {
      ok = got == have;
    } else if (group_size > 0) {
      ok = have <= got && got / group_size == have && got % group_size == 0;
    } else {
      ok = have > 0 && got > 0 && got % have == 0;
    }
  }
  if (!ok) {
    return Mismatch(inst, fmt::format("({}, the operand gathered along dimension {}{})",
                                      x.ToString(false), d,
                                      group_size > 0 ? fmt::format(" by {}", group_size) : ""));
  }
  return w;
}

StatusOr<Shape> InferCallStart(const HloInstruction& inst) {
  const Shape& w = inst.shape();
  bool ok = w.IsTuple() && w.tuple_shapes_size() >= 2 && w.tuple_shapes(0).IsTuple() &&
            w.tuple_shapes(0).tuple_shapes_size() == inst.operand_count();
  for (int64_t i = 0; ok && i < inst.operand_count(); ++i) {
    ok = w.tuple_shapes(0).tuple_shapes(i).Compatible(inst.operand(i)->shape());
  }
  const HloComputation* callee = inst.calls().size() == 1 ? inst.calls()[0] : nullptr;
  if (ok && callee != nullptr && callee->root_instruction() != nullptr) {
    ok = w.tuple_shapes(1).Compatible(callee->root_instruction()->shape());
  }
  if (!ok) {
    return Mismatch(inst, "((the operands' shapes), the called computation's result, "
                          "context...)");
  }
  return w;
}

}  // namespace

StatusOr<Shape> InferAsyncStart(const HloInstruction& inst, int64_t group_size) {
  if (inst.opcode() == HloOpcode::kAsyncStart) return InferCallStart(inst);
  if (inst.operand_count() != 1) return inst.shape();
  if (inst.opcode() == HloOpcode::kAllGatherStart) return InferAllGatherStart(inst, group_size);
  return InferCopyLikeStart(inst);
}

StatusOr<Shape> InferAsyncUpdate(const HloInstruction& inst) {
  if (inst.operand_count() != 1) {
    return InvalidArgument(fmt::format("expects 1 operand, has {}", inst.operand_count()));
  }
  return inst.operand(0)->shape();
}

}  // namespace tpusim::hlo
