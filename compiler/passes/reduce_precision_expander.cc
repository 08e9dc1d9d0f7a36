#include "compiler/passes/reduce_precision_expander.h"

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

constexpr int64_t kF32MantissaBits = 23;
constexpr int64_t kF32ExponentBits = 8;
constexpr int64_t kF16MantissaBits = 10;

bool Expandable(const HloInstruction& r) {
  if (r.opcode() != HloOpcode::kReducePrecision || !r.shape().IsArray()) return false;
  const PrimitiveType t = r.shape().element_type();
  return (t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16) &&
         r.exponent_bits() >= 1 && r.exponent_bits() <= kF32ExponentBits &&
         r.mantissa_bits() >= 0 && r.mantissa_bits() <= kF32MantissaBits;
}

void Expand(hlo::HloComputation& comp, HloInstruction* r) {
  HloBuilder b(&comp, r);
  const Shape s32(PrimitiveType::kS32, r->shape().dimensions());
  const Shape f32(PrimitiveType::kF32, r->shape().dimensions());
  auto s32_const = [&](int64_t v, const char* s) { return b.SplatInt(s32, v, s); };
  const int64_t m = r->mantissa_bits(), e = r->exponent_bits();
  HloInstruction* x = r->operand(0);
  const PrimitiveType type = x->shape().element_type();
  if (type != PrimitiveType::kF32) x = b.Convert(x, PrimitiveType::kF32, "f32");
  HloInstruction* bits = b.BitcastConvert(x, PrimitiveType::kS32, "bits");
  if (m < kF32MantissaBits) {
    const int64_t shift = kF32MantissaBits - m;
    const int64_t last_bit = int64_t{1} << shift;
    HloInstruction* last = b.Binary(
        HloOpcode::kAnd,
        b.Binary(HloOpcode::kShiftRightLogical, bits, s32_const(shift, "shift"), "shifted"),
        s32_const(1, "one"), "last_bit");
    HloInstruction* bias =
        b.Binary(HloOpcode::kAdd, last, s32_const((last_bit >> 1) - 1, "half"), "bias");
    const int64_t mask = static_cast<int32_t>(~static_cast<uint32_t>(last_bit - 1));
    bits = b.Binary(HloOpcode::kAnd, b.Binary(HloOpcode::kAdd, bits, bias, "rounded"),
                    s32_const(mask, "truncate"), "truncated");
  }
  // The exponent is reduced only below the element type's own width (f16: 5 bits), as XLA
  // applies the algorithm to the type's own bits.
  const int64_t type_exponent_bits = type == PrimitiveType::kF16 ? 5 : kF32ExponentBits;
  if (e < type_exponent_bits) {
    const int64_t exp_mask = int64_t{0xFF} << kF32MantissaBits;
    const int64_t bias = (int64_t{1} << (kF32ExponentBits - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (e - 1)) - 1;
    HloInstruction* exponent =
        b.Binary(HloOpcode::kAnd, bits, s32_const(exp_mask, "exp_mask"), "exp");
    HloInstruction* overflow =
        b.Compare(exponent, s32_const((bias + reduced_bias) << kF32MantissaBits, "max_exp"),
                  hlo::ComparisonDirection::kGt, "overflows");
    HloInstruction* underflow =
        b.Compare(exponent, s32_const((bias - reduced_bias) << kF32MantissaBits, "min_exp"),
                  hlo::ComparisonDirection::kLe, "underflows");
    HloInstruction* sign = b.Binary(
        HloOpcode::kAnd, bits, s32_const(std::numeric_limits<int32_t>::min(), "sign_mask"), "sign");
    HloInstruction* inf =
        b.Binary(HloOpcode::kOr, sign, s32_const(exp_mask, "inf_bits"), "signed_inf");
    bits = b.Select(overflow, inf, b.Select(underflow, sign, bits, "flushed"), "clamped");
  }
  HloInstruction* y = b.BitcastConvert(bits, PrimitiveType::kF32, "value");
  // An f16 subnormal (|x| < 2^-14) is k * 2^-24; XLA rounds its own bits, i.e. k to a multiple of
  // 2^(10 - M), ties to even. Where the exponent clamp does not flush it (E >= 5) that is
  // round-nearest-even(x * 2^(14 + M)) * 2^-(14 + M), exact in f32 (powers of two, k < 2^10).
  if (type == PrimitiveType::kF16 && e >= type_exponent_bits && m < kF16MantissaBits) {
    auto f32_const = [&](double v, const char* s) { return b.Splat(f32, v, s); };
    const double scale = std::ldexp(1.0, static_cast<int>(14 + m));
    HloInstruction* scaled =
        b.Binary(HloOpcode::kMultiply, x, f32_const(scale, "sub_scale"), "sub_k");
    HloInstruction* quanta = b.Unary(HloOpcode::kRoundNearestEven, scaled, "sub_round");
    HloInstruction* sub_value =
        b.Binary(HloOpcode::kMultiply, quanta, f32_const(1.0 / scale, "sub_unscale"), "sub_value");
    HloInstruction* subnormal =
        b.Compare(b.Unary(HloOpcode::kAbs, x, "abs"), f32_const(std::ldexp(1.0, -14), "f16_min"),
                  hlo::ComparisonDirection::kLt, "f16_subnormal");
    y = b.Select(subnormal, sub_value, y, "f16_rounded");
  }
  HloInstruction* is_nan = b.Compare(x, x, hlo::ComparisonDirection::kNe, "is_nan");
  HloInstruction* nan_out =
      m > 0 ? x : b.Splat(f32, std::numeric_limits<double>::infinity(), "inf", "inf_b");
  y = b.Select(is_nan, nan_out, y, "nan_kept");
  if (type != PrimitiveType::kF32) y = b.Convert(y, type, "back");
  r->ReplaceAllUsesWith(y);
  comp.RemoveInstruction(r);
}

}  // namespace

StatusOr<bool> ReducePrecisionExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, Expand);
}

}  // namespace tpusim::compiler
