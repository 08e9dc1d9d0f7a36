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

class BitOps {
 public:
  BitOps(HloBuilder& b, std::vector<int64_t> dims) : b_(b), dims_(std::move(dims)) {}
  HloInstruction* S32(int64_t v, const char* s) {
    return b_.Broadcast(b_.ScalarConstant(PrimitiveType::kS32, static_cast<double>(v), s),
                        Shape(PrimitiveType::kS32, dims_), {}, s);
  }
  HloInstruction* Op(HloOpcode op, HloInstruction* a, HloInstruction* c, const char* s) {
    return b_.Binary(op, a, c, s);
  }
  HloInstruction* As(HloInstruction* x, PrimitiveType t, HloOpcode op, const char* s) {
    auto c = std::make_unique<HloInstruction>(op, Shape(t, dims_), b_.UniqueName(x->name() + s));
    c->AppendOperand(x);
    return b_.Add(std::move(c));
  }
  HloBuilder& b() { return b_; }

 private:
  HloBuilder& b_;
  std::vector<int64_t> dims_;
};

void Expand(hlo::HloComputation& comp, HloInstruction* r) {
  HloBuilder b(&comp, r);
  BitOps o(b, r->shape().dimensions());
  const int64_t m = r->mantissa_bits(), e = r->exponent_bits();
  HloInstruction* x = r->operand(0);
  const PrimitiveType type = x->shape().element_type();
  if (type != PrimitiveType::kF32) x = o.As(x, PrimitiveType::kF32, HloOpcode::kConvert, ".f32");
  HloInstruction* bits = o.As(x, PrimitiveType::kS32, HloOpcode::kBitcastConvert, ".bits");
  if (m < kF32MantissaBits) {
    const int64_t shift = kF32MantissaBits - m;
    const int64_t last_bit = int64_t{1} << shift;
    HloInstruction* last = o.Op(HloOpcode::kAnd,
                                o.Op(HloOpcode::kShiftRightLogical, bits, o.S32(shift, "shift"),
                                     "shifted"),
                                o.S32(1, "one"), "last_bit");
    HloInstruction* bias = o.Op(HloOpcode::kAdd, last, o.S32((last_bit >> 1) - 1, "half"), "bias");
    const int64_t mask = static_cast<int32_t>(~static_cast<uint32_t>(last_bit - 1));
    bits = o.Op(HloOpcode::kAnd, o.Op(HloOpcode::kAdd, bits, bias, "rounded"),
                o.S32(mask, "truncate"), "truncated");
  }
  // The exponent is reduced only below the element type's own width (f16: 5 bits), as XLA
  // applies the algorithm to the type's own bits.
  const int64_t type_exponent_bits = type == PrimitiveType::kF16 ? 5 : kF32ExponentBits;
  if (e < type_exponent_bits) {
    const int64_t exp_mask = int64_t{0xFF} << kF32MantissaBits;
    const int64_t bias = (int64_t{1} << (kF32ExponentBits - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (e - 1)) - 1;
    HloInstruction* exponent = o.Op(HloOpcode::kAnd, bits, o.S32(exp_mask, "exp_mask"), "exp");
    HloInstruction* overflow =
        b.Compare(exponent, o.S32((bias + reduced_bias) << kF32MantissaBits, "max_exp"),
                  hlo::ComparisonDirection::kGt, "overflows");
    HloInstruction* underflow =
        b.Compare(exponent, o.S32((bias - reduced_bias) << kF32MantissaBits, "min_exp"),
                  hlo::ComparisonDirection::kLe, "underflows");
    HloInstruction* sign =
        o.Op(HloOpcode::kAnd, bits, o.S32(std::numeric_limits<int32_t>::min(), "sign_mask"),
             "sign");
    HloInstruction* inf = o.Op(HloOpcode::kOr, sign, o.S32(exp_mask, "inf_bits"), "signed_inf");
    bits = b.Select(overflow, inf, b.Select(underflow, sign, bits, "flushed"), "clamped");
  }
  HloInstruction* y = o.As(bits, PrimitiveType::kF32, HloOpcode::kBitcastConvert, ".value");
  // An f16 subnormal (|x| < 2^-14) is k * 2^-24; XLA rounds its own bits, i.e. k to a multiple of
  // 2^(10 - M), ties to even. Where the exponent clamp does not flush it (E >= 5) that is
  // round-nearest-even(x * 2^(14 + M)) * 2^-(14 + M), exact in f32 (powers of two, k < 2^10).
  if (type == PrimitiveType::kF16 && e >= type_exponent_bits && m < kF16MantissaBits) {
    const Shape f32(PrimitiveType::kF32, r->shape().dimensions());
    auto f32_const = [&](double v, const char* s) {
      return b.Broadcast(b.ScalarConstant(PrimitiveType::kF32, v, s), f32, {}, s);
    };
    const double scale = std::ldexp(1.0, static_cast<int>(14 + m));
    HloInstruction* scaled = o.Op(HloOpcode::kMultiply, x, f32_const(scale, "sub_scale"), "sub_k");
    HloInstruction* quanta = b.Unary(HloOpcode::kRoundNearestEven, scaled, "sub_round");
    HloInstruction* sub_value =
        o.Op(HloOpcode::kMultiply, quanta, f32_const(1.0 / scale, "sub_unscale"), "sub_value");
    HloInstruction* subnormal =
        b.Compare(b.Unary(HloOpcode::kAbs, x, "abs"), f32_const(std::ldexp(1.0, -14), "f16_min"),
                  hlo::ComparisonDirection::kLt, "f16_subnormal");
    y = b.Select(subnormal, sub_value, y, "f16_rounded");
  }
  HloInstruction* is_nan = b.Compare(x, x, hlo::ComparisonDirection::kNe, "is_nan");
  HloInstruction* nan_out =
      m > 0 ? x
            : b.Broadcast(b.ScalarConstant(PrimitiveType::kF32,
                                           std::numeric_limits<double>::infinity(), "inf"),
                          Shape(PrimitiveType::kF32, r->shape().dimensions()), {}, "inf_b");
  y = b.Select(is_nan, nan_out, y, "nan_kept");
  if (type != PrimitiveType::kF32) y = o.As(y, type, HloOpcode::kConvert, ".back");
  r->ReplaceAllUsesWith(y);
  comp.RemoveInstruction(r);
}

}  // namespace

StatusOr<bool> ReducePrecisionExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, Expand);
}

}  // namespace tpusim::compiler
