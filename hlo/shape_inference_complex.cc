#include "hlo/shape_inference_complex.h"

#include <fmt/format.h>

namespace tpusim::hlo {
namespace {

Status Err(std::string message) { return InvalidArgument(std::move(message)); }

std::string_view TypeName(PrimitiveType t) { return PrimitiveTypeName(t); }

// Opcodes XLA's shape inference gives only floating-point, integral or pred operands.
bool RefusesComplexOperand(HloOpcode op) {
  switch (op) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kIsFinite:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kNot:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

Status CheckConvert(const HloInstruction& inst, PrimitiveType from) {
  const PrimitiveType to = inst.shape().IsArray() ? inst.shape().element_type() : from;
  if (inst.opcode() == HloOpcode::kConvert && IsComplex(from) && !IsComplex(to)) {
    // XLA: "Conversion from complex to real type ... is not implemented" (take real() first).
    return Err(fmt::format("conversion from complex to real type {} => {} is not supported by "
                           "XLA; use real(), imag() or abs()",
                           TypeName(from), TypeName(to)));
  }
  if (inst.opcode() == HloOpcode::kBitcastConvert && IsComplex(from) != IsComplex(to)) {
    return Err(fmt::format("bitcast-convert between complex and real type {} => {} (XLA refuses "
                           "it)",
                           TypeName(from), TypeName(to)));
  }
  return OkStatus();
}

Status CheckComplexCompose(const HloInstruction& inst) {
  if (inst.operand_count() != 2) return OkStatus();  // reported by the elementwise rule
  const PrimitiveType a = inst.operand(0)->shape().element_type();
  const PrimitiveType b = inst.operand(1)->shape().element_type();
  const bool ok = a == b && (a == PrimitiveType::kF32 || a == PrimitiveType::kF64);
  if (!ok) {
    return Err(fmt::format("complex takes (f32, f32) -> c64 or (f64, f64) -> c128, got ({}, {})",
                           TypeName(a), TypeName(b)));
  }
  return OkStatus();
}

}  // namespace

Status CheckComplexElementTypes(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kComplex) return CheckComplexCompose(inst);
  if (inst.operand_count() < 1 || !inst.operand(0)->shape().IsArray()) return OkStatus();
  const PrimitiveType t = inst.operand(0)->shape().element_type();
  if (op == HloOpcode::kConvert || op == HloOpcode::kBitcastConvert) return CheckConvert(inst, t);
  if ((op == HloOpcode::kReal || op == HloOpcode::kImag) && !IsComplex(t) &&
      !IsFloatingPoint(t)) {
    return Err(fmt::format("{} takes a complex or floating-point operand, got {}",
                           HloOpcodeString(op), TypeName(t)));
  }
  bool any_complex = false;
  for (const HloInstruction* o : inst.operands()) {
    any_complex = any_complex || (o->shape().IsArray() && IsComplex(o->shape().element_type()));
  }
  if (!any_complex) return OkStatus();
  if (RefusesComplexOperand(op)) {
    return Err(fmt::format("{} is not defined on complex operands ({})", HloOpcodeString(op),
                           TypeName(t)));
  }
  if (op == HloOpcode::kCompare && inst.comparison_direction() != ComparisonDirection::kEq &&
      inst.comparison_direction() != ComparisonDirection::kNe) {
    return Err(fmt::format("compare direction={} is not defined on complex operands ({}): "
                           "complex values have no order, only EQ and NE compare them",
                           ComparisonDirectionName(inst.comparison_direction()), TypeName(t)));
  }
  return OkStatus();
}

StatusOr<Shape> InferFft(const HloInstruction& inst) {
  if (inst.operand_count() != 1) {
    return Err(fmt::format("expects 1 operand(s), has {}", inst.operand_count()));
  }
  const Shape& in = inst.operand(0)->shape();
  if (!in.IsArray()) return Err(fmt::format("operand must be an array, got {}", in.ToString(false)));
  const std::vector<int64_t>& len = inst.fft_length();
  const int64_t n = static_cast<int64_t>(len.size());
  const std::string_view kind = FftTypeName(inst.fft_type());
  if (n < 1 || n > 3) return Err(fmt::format("fft_length must name 1 to 3 dimensions, has {}", n));
  if (in.rank() < n) {
    return Err(fmt::format("an FFT of rank {} needs an operand of rank >= {}, got {}", n, n,
                           in.ToString(false)));
  }
  const PrimitiveType t = in.element_type();
  const int64_t first = in.rank() - n;
  std::vector<int64_t> dims = in.dimensions();
  switch (inst.fft_type()) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplex(t)) {
        return Err(fmt::format("{} needs a complex operand, got {}", kind, TypeName(t)));
      }
      return Shape(t, dims);
    case FftType::kRfft: {
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
        return Err(fmt::format("RFFT needs an f32 or f64 operand, got {}", TypeName(t)));
      }
      for (int64_t i = 0; i < n; ++i) {
        if (dims[static_cast<size_t>(first + i)] != len[static_cast<size_t>(i)]) {
          return Err(fmt::format("RFFT: operand dimension {} is {} but fft_length[{}] is {}",
                                 first + i, dims[static_cast<size_t>(first + i)], i,
                                 len[static_cast<size_t>(i)]));
        }
      }
      if (len.back() != 0) dims.back() = len.back() / 2 + 1;
      return Shape(t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128, dims);
    }
    case FftType::kIrfft: {
      if (!IsComplex(t)) {
        return Err(fmt::format("IRFFT needs a complex operand, got {}", TypeName(t)));
      }
      for (int64_t i = 0; i + 1 < n; ++i) {
        if (dims[static_cast<size_t>(first + i)] != len[static_cast<size_t>(i)]) {
          return Err(fmt::format("IRFFT: operand dimension {} is {} but fft_length[{}] is {}",
                                 first + i, dims[static_cast<size_t>(first + i)], i,
                                 len[static_cast<size_t>(i)]));
        }
      }
      const int64_t last = dims.back();
      if ((last != 0 || len.back() != 0) && last != len.back() / 2 + 1) {
        return Err(fmt::format("IRFFT: the last operand dimension is {} but must be "
                               "fft_length[{}]/2+1 = {}",
                               last, n - 1, len.back() / 2 + 1));
      }
      dims.back() = len.back();
      return Shape(ComplexComponentType(t), dims);
    }
  }
  return Err("unknown fft_type");
}

}  // namespace tpusim::hlo
