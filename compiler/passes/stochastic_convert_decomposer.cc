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

class Ops {
 public:
  Ops(HloBuilder& b, std::vector<int64_t> dims) : b_(b), dims_(std::move(dims)) {}
  // A constant of type t broadcast to the dimensions; integer values given exactly.
  HloInstruction* Splat(PrimitiveType t, double value, const char* s) {
    return b_.Broadcast(b_.ScalarConstant(t, value, s), Shape(t, dims_), {}, s);
  }
  HloInstruction* SplatInt(PrimitiveType t, int64_t value, const char* s) {
    HloInstruction* c = b_.ScalarConstant(t, 0, s);
    c->mutable_literal().int_values = {value};
    return b_.Broadcast(c, Shape(t, dims_), {}, s);
  }
  HloInstruction* Convert(HloInstruction* x, PrimitiveType t, const char* s) {
    auto c = std::make_unique<HloInstruction>(HloOpcode::kConvert, Shape(t, dims_),
                                              b_.UniqueName(x->name() + s));
    c->AppendOperand(x);
    return b_.Add(std::move(c));
  }
  HloBuilder& b() { return b_; }

 private:
  HloBuilder& b_;
  std::vector<int64_t> dims_;
};

void Decompose(hlo::HloComputation& comp, HloInstruction* s) {
  HloBuilder b(&comp, s);
  Ops o(b, s->shape().dimensions());
  HloInstruction* x = s->operand(0);
  HloInstruction* random = s->operand(1);
  const PrimitiveType xt = x->shape().element_type();
  const PrimitiveType rt = random->shape().element_type();
  const PrimitiveType to = s->shape().element_type();
  const int to_bits = hlo::BitWidth(to);

  HloInstruction* negative = b.Compare(b.Unary(HloOpcode::kSign, x, "sign"),
                                       o.Splat(xt, 0, "zero"), ComparisonDirection::kLt, "is_neg");
  HloInstruction* magnitude = b.Unary(HloOpcode::kAbs, x, "abs");
  HloInstruction* truncated = b.Unary(HloOpcode::kFloor, magnitude, "floor");
  HloInstruction* fraction = b.Binary(HloOpcode::kSubtract, magnitude, truncated, "fraction");
  PrimitiveType ft = xt;
  if (xt == PrimitiveType::kF16) {  // f * 2^16 overflows f16
    fraction = o.Convert(fraction, PrimitiveType::kF32, ".f32");
    ft = PrimitiveType::kF32;
  }
  HloInstruction* fixed = b.Binary(
      HloOpcode::kMultiply, fraction,
      o.Splat(ft, std::ldexp(1.0, hlo::BitWidth(rt)), "scale"), "fixed");
  HloInstruction* round_up =
      b.Compare(random, o.Convert(fixed, rt, ".bits"), ComparisonDirection::kLt, "round_up");
  HloInstruction* r = o.Convert(truncated, to, ".int");
  r = b.Select(round_up, b.Binary(HloOpcode::kAdd, r, o.SplatInt(to, 1, "one"), "plus_one"), r,
               "rounded");
  r = b.Select(negative, b.Unary(HloOpcode::kNegate, r, "negated"), r, "signed");
  const int64_t min = static_cast<int64_t>(~uint64_t{0} << (to_bits - 1));  // -2^(bits-1)
  const int64_t max = static_cast<int64_t>((uint64_t{1} << (to_bits - 1)) - 1);
  HloInstruction* below = b.Compare(x, o.Splat(xt, static_cast<double>(min), "min_f"),
                                    ComparisonDirection::kLe, "below_min");
  r = b.Select(below, o.SplatInt(to, min, "min"), r, "clamp_low");
  HloInstruction* above = b.Compare(x, o.Splat(xt, static_cast<double>(max), "max_f"),
                                    ComparisonDirection::kGe, "above_max");
  r = b.Select(above, o.SplatInt(to, max, "max"), r, "clamp_high");
  s->ReplaceAllUsesWith(r);
  comp.RemoveInstruction(s);
}

}  // namespace

StatusOr<bool> StochasticConvertDecomposer::Run(hlo::HloModule& module) {
  return RewriteEach(module, Decomposable, Decompose);
}

}  // namespace tpusim::compiler
