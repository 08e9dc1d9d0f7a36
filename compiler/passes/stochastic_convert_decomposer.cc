#include "compiler/passes/stochastic_convert_decomposer.h"

#include <cmath>
#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

bool Decomposable(const HloInstruction& s) {
  if (s.opcode() != HloOpcode::kStochasticConvert || s.operand_count() != 2 ||
      !s.shape().IsArray()) {
    return false;
  }
  const PrimitiveType x = s.operand(0)->shape().element_type();
  const PrimitiveType r = s.operand(1)->shape().element_type();
  const PrimitiveType to = s.shape().element_type();
  return hlo::IsFloatingPoint(x) && hlo::BitWidth(x) >= 16 && hlo::IsUnsignedInteger(r) &&
         hlo::BitWidth(r) == hlo::BitWidth(x) && hlo::IsSignedInteger(to) &&
         hlo::BitWidth(to) >= 8;
}

void Decompose(hlo::HloComputation& comp, HloInstruction* s) {
  HloBuilder b(&comp, s);
  const std::vector<int64_t>& dims = s->shape().dimensions();
  HloInstruction* x = s->operand(0);
  HloInstruction* random = s->operand(1);
  const PrimitiveType xt = x->shape().element_type();
  const PrimitiveType rt = random->shape().element_type();
  const PrimitiveType to = s->shape().element_type();
  const int to_bits = hlo::BitWidth(to);

  HloInstruction* negative =
      b.Compare(b.Unary(HloOpcode::kSign, x, "sign"), b.Splat(Shape(xt, dims), 0, "zero"),
                ComparisonDirection::kLt, "is_neg");
  HloInstruction* magnitude = b.Unary(HloOpcode::kAbs, x, "abs");
  HloInstruction* truncated = b.Unary(HloOpcode::kFloor, magnitude, "floor");
  HloInstruction* fraction = b.Binary(HloOpcode::kSubtract, magnitude, truncated, "fraction");
  PrimitiveType ft = xt;
  if (xt == PrimitiveType::kF16) {  // f * 2^16 overflows f16
    fraction = b.Convert(fraction, PrimitiveType::kF32, "f32");
    ft = PrimitiveType::kF32;
  }
  HloInstruction* fixed = b.Binary(
      HloOpcode::kMultiply, fraction,
      b.Splat(Shape(ft, dims), std::ldexp(1.0, hlo::BitWidth(rt)), "scale"), "fixed");
  HloInstruction* round_up =
      b.Compare(random, b.Convert(fixed, rt, "bits"), ComparisonDirection::kLt, "round_up");
  HloInstruction* r = b.Convert(truncated, to, "int");
  HloInstruction* plus_one =
      b.Binary(HloOpcode::kAdd, r, b.SplatInt(Shape(to, dims), 1, "one"), "plus_one");
  r = b.Select(round_up, plus_one, r, "rounded");
  r = b.Select(negative, b.Unary(HloOpcode::kNegate, r, "negated"), r, "signed");
  const int64_t min = static_cast<int64_t>(~uint64_t{0} << (to_bits - 1));  // -2^(bits-1)
  const int64_t max = static_cast<int64_t>((uint64_t{1} << (to_bits - 1)) - 1);
  HloInstruction* below = b.Compare(x, b.Splat(Shape(xt, dims), static_cast<double>(min), "min_f"),
                                    ComparisonDirection::kLe, "below_min");
  r = b.Select(below, b.SplatInt(Shape(to, dims), min, "min"), r, "clamp_low");
  HloInstruction* above = b.Compare(x, b.Splat(Shape(xt, dims), static_cast<double>(max), "max_f"),
                                    ComparisonDirection::kGe, "above_max");
  r = b.Select(above, b.SplatInt(Shape(to, dims), max, "max"), r, "clamp_high");
  s->ReplaceAllUsesWith(r);
  comp.RemoveInstruction(s);
}

}  // namespace

StatusOr<bool> StochasticConvertDecomposer::Run(hlo::HloModule& module) {
  return RewriteEach(module, Decomposable, Decompose);
}

}  // namespace tpusim::compiler
