#include "hlo/eval/kernels/elementwise.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "hlo/eval/convert.h"
#include "hlo/eval/kernels/elementwise_ops.h"
#include "hlo/eval/kernels/map.h"
#include "hlo/eval/kernels/parallel.h"

namespace tpusim::hlo {
namespace {

// Applies a float function in the compute type (f32 for f16/bf16) and rounds once.
template <typename T, typename F>
T FloatFn(T x, F f) {
  return static_cast<T>(f(static_cast<ComputeType<T>>(x)));
}

template <typename T>
StatusOr<bool> UnaryTyped(HloOpcode op, const Literal& x, Literal& out, const KernelOptions& opt) {
  using C = ComputeType<T>;
  constexpr bool kFloat = kIsFloat<T>;
  constexpr bool kInt = kIsInt<T>;
  constexpr bool kPred = std::is_same_v<T, bool>;
  auto float_op = [&](auto f) -> StatusOr<bool> {
    if constexpr (kFloat) {
      MapUnary<T, T>(x, out, opt, [&](T v) { return FloatFn(v, f); });
      return true;
    }
    return ElementTypeError(op, x.element_type());
  };
  switch (op) {
    case HloOpcode::kCopy:
      out = x;
      return true;
    // real / imag of a floating-point value (XLA's shape inference takes them): the value, and 0.
    case HloOpcode::kReal:
      if constexpr (kFloat) {
        out = x;
        return true;
      }
      break;
    case HloOpcode::kImag:
      return float_op([](C) { return C(0); });
    case HloOpcode::kAbs:
      if constexpr (kFloat) return float_op([](C v) { return std::fabs(v); });
      if constexpr (kInt) {
        MapUnary<T, T>(x, out, opt, [](T v) {
          if constexpr (std::is_signed_v<T>) return v < 0 ? ew::Sub(T(0), v) : v;
          return v;
        });
        return true;
      }
      break;
    case HloOpcode::kNegate:
      if constexpr (kFloat) return float_op([](C v) { return -v; });
      if constexpr (kInt) {
        MapUnary<T, T>(x, out, opt, [](T v) { return ew::Sub(T(0), v); });
        return true;
      }
      break;
    case HloOpcode::kSign:
      if constexpr (kFloat) {
        return float_op([](C v) -> C {
          if (std::isnan(v) || v == C(0)) return v;  // NaN -> NaN, +-0 -> +-0
          return v > C(0) ? C(1) : C(-1);
        });
      }
      if constexpr (kInt) {
        MapUnary<T, T>(x, out, opt, [](T v) {
          if constexpr (std::is_signed_v<T>) return static_cast<T>(v > 0 ? 1 : (v < 0 ? -1 : 0));
          return static_cast<T>(v > 0 ? 1 : 0);
        });
        return true;
      }
      break;
    case HloOpcode::kNot:
      if constexpr (kPred) {
        MapUnary<T, T>(x, out, opt, [](T v) { return !v; });
        return true;
      }
      if constexpr (kInt) {
        MapUnary<T, T>(x, out, opt, [](T v) { return static_cast<T>(~v); });
        return true;
      }
      break;
    case HloOpcode::kFloor:
      return float_op([](C v) { return std::floor(v); });
    case HloOpcode::kCeil:
      return float_op([](C v) { return std::ceil(v); });
    case HloOpcode::kRoundNearestAfz:
      return float_op([](C v) { return std::round(v); });
    case HloOpcode::kRoundNearestEven:
      return float_op([](C v) { return std::nearbyint(v); });
    case HloOpcode::kExp:
      return float_op([](C v) { return std::exp(v); });
    case HloOpcode::kExpm1:
      return float_op([](C v) { return std::expm1(v); });
    case HloOpcode::kLog:
      return float_op([](C v) { return std::log(v); });
    case HloOpcode::kLog1p:
      return float_op([](C v) { return std::log1p(v); });
    case HloOpcode::kLogistic:
      return float_op([](C v) { return C(1) / (C(1) + std::exp(-v)); });
    case HloOpcode::kSqrt:
      return float_op([](C v) { return std::sqrt(v); });
    case HloOpcode::kRsqrt:
      return float_op([](C v) { return C(1) / std::sqrt(v); });
    case HloOpcode::kCbrt:
      return float_op([](C v) { return std::cbrt(v); });
    case HloOpcode::kSin:
      return float_op([](C v) { return std::sin(v); });
    case HloOpcode::kCos:
      return float_op([](C v) { return std::cos(v); });
    case HloOpcode::kTan:
      return float_op([](C v) { return std::tan(v); });
    case HloOpcode::kTanh:
      return float_op([](C v) { return std::tanh(v); });
    case HloOpcode::kAcos:
      return float_op([](C v) { return std::acos(v); });
    case HloOpcode::kAcosh:
      return float_op([](C v) { return std::acosh(v); });
    case HloOpcode::kAsin:
      return float_op([](C v) { return std::asin(v); });
    case HloOpcode::kAsinh:
      return float_op([](C v) { return std::asinh(v); });
    case HloOpcode::kAtan:
      return float_op([](C v) { return std::atan(v); });
    case HloOpcode::kAtanh:
      return float_op([](C v) { return std::atanh(v); });
    case HloOpcode::kCosh:
      return float_op([](C v) { return std::cosh(v); });
    case HloOpcode::kSinh:
      return float_op([](C v) { return std::sinh(v); });
    case HloOpcode::kErf:
      return float_op([](C v) { return std::erf(v); });
    case HloOpcode::kIsFinite:
      if constexpr (kFloat) {
        MapUnary<T, bool>(x, out, opt, [](T v) { return std::isfinite(static_cast<C>(v)); });
        return true;
      }
      break;
    case HloOpcode::kPopulationCount:
      if constexpr (kInt) {
        MapUnary<T, T>(x, out, opt, [](T v) {
          return static_cast<T>(std::popcount(static_cast<std::make_unsigned_t<T>>(v)));
        });
        return true;
      }
      break;
    case HloOpcode::kClz:
      if constexpr (kInt) {
        MapUnary<T, T>(x, out, opt, [](T v) {
          return static_cast<T>(std::countl_zero(static_cast<std::make_unsigned_t<T>>(v)));
        });
        return true;
      }
      break;
    default:
      return Unimplemented(
          fmt::format("'{}' is not an elementwise unary operation", HloOpcodeString(op)));
  }
  return ElementTypeError(op, x.element_type());
}

template <typename T>
StatusOr<bool> BinaryTyped(HloOpcode op, const Literal& a, const Literal& b, Literal& out,
                           const KernelOptions& opt) {
  constexpr bool kFloat = kIsFloat<T>;
  auto run = [&](auto fn) -> StatusOr<bool> {
    MapBinary<T, T>(a, b, out, opt, fn);
    return true;
  };
  switch (op) {
    case HloOpcode::kAdd:
      return run(Call<ew::Add<T>>{});
    case HloOpcode::kSubtract:
      return run(Call<ew::Sub<T>>{});
    case HloOpcode::kMultiply:
      return run(Call<ew::Mul<T>>{});
    case HloOpcode::kDivide:
      return run(Call<ew::Div<T>>{});
    case HloOpcode::kRemainder:
      return run(Call<ew::Rem<T>>{});
    case HloOpcode::kMaximum:
      return run(Call<ew::Max<T>>{});
    case HloOpcode::kMinimum:
      return run(Call<ew::Min<T>>{});
    case HloOpcode::kPower:
      return run(Call<ew::Pow<T>>{});
    case HloOpcode::kAtan2:
      if constexpr (kFloat) return run(Call<ew::Atan2<T>>{});
      break;
    case HloOpcode::kMulhi:
      if constexpr (kIsInt<T>) return run(Call<ew::Mulhi<T>>{});
      break;
    case HloOpcode::kAnd:
      if constexpr (!kFloat) return run(Call<ew::And<T>>{});
      break;
    case HloOpcode::kOr:
      if constexpr (!kFloat) return run(Call<ew::Or<T>>{});
      break;
    case HloOpcode::kXor:
      if constexpr (!kFloat) return run(Call<ew::Xor<T>>{});
      break;
    case HloOpcode::kShiftLeft:
      if constexpr (kIsInt<T>) return run(Call<ew::ShiftLeft<T>>{});
      break;
    case HloOpcode::kShiftRightLogical:
      if constexpr (kIsInt<T>) return run(Call<ew::ShiftRightLogical<T>>{});
      break;
    case HloOpcode::kShiftRightArithmetic:
      if constexpr (kIsInt<T>) return run(Call<ew::ShiftRightArithmetic<T>>{});
      break;
    default:
      return Unimplemented(
          fmt::format("'{}' is not an elementwise binary operation", HloOpcodeString(op)));
  }
  return ElementTypeError(op, a.element_type());
}

Status CheckSameDims(const char* what, const Literal& x, const Shape& out) {
  if (!x.IsArray() || x.shape().dimensions() != out.dimensions()) {
    return InvalidArgument(fmt::format("{}: operand {} does not match result {}", what,
                                       x.shape().ToString(false), out.ToString(false)));
  }
  return OkStatus();
}

bool IsInt4(PrimitiveType t) { return t == PrimitiveType::kS4 || t == PrimitiveType::kU4; }

// An s4/u4 array widened to 32 bits: its 4 bits sign-extended (from bit 3) into s32, or
// zero-extended into u32.
StatusOr<Literal> WidenInt4(const Literal& x, bool sign_extend, const KernelOptions& opt) {
  Shape shape = x.shape();
  shape.set_element_type(sign_extend ? PrimitiveType::kS32 : PrimitiveType::kU32);
  TPUSIM_ASSIGN_OR_RETURN(Literal wide, Literal::Create(shape, opt.max_bytes));
  PrimitiveTypeSwitch(x.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt4<T>) {
      const T* src = x.data<T>();
      for (int64_t i = 0; i < x.element_count(); ++i) {
        const int v = src[i].value();
        if (sign_extend) {  // bit 3 is the sign (for u4 too: shift-right-arithmetic)
          wide.mutable_data<int32_t>()[i] = (v & 0x8) ? (v | ~0xF) : (v & 0xF);
        } else {
          wide.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(v) & 0xFu;
        }
      }
    }
  });
  return wide;
}

// The extension of s4/u4 operands under which op's 32-bit result has, in its low 4 bits, what
// LLVM's i4 op gives (XLA's emitters compute s4/u4 as i4): the type's own (sign for s4, zero for
// u4), except zero-extension for shift-right-logical, popcnt and clz (they see the 4 bits) and
// sign-extension for shift-right-arithmetic (it replicates bit 3).
bool SignExtends(HloOpcode op, PrimitiveType t) {
  if (op == HloOpcode::kShiftRightLogical || op == HloOpcode::kPopulationCount ||
      op == HloOpcode::kClz) {
    return false;
  }
  return op == HloOpcode::kShiftRightArithmetic || t == PrimitiveType::kS4;
}

// An elementwise op on s4/u4: computed on the widened operands and wrapped back to 4 bits (the
// low 4 bits, as an i4 op wraps); clz counts from bit 3. mulhi (the high half of an 8-bit
// product) is not computed this way and is refused.
StatusOr<Literal> Int4Widened(HloOpcode op, std::span<const Literal* const> operands,
                              const Shape& out, const KernelOptions& opt) {
  const PrimitiveType t = operands[0]->element_type();
  if (op == HloOpcode::kMulhi) return ElementTypeError(op, t);
  const bool sign = SignExtends(op, t);
  std::vector<Literal> wide;
  for (const Literal* x : operands) {
    TPUSIM_ASSIGN_OR_RETURN(Literal w, WidenInt4(*x, sign, opt));
    wide.push_back(std::move(w));
  }
  Shape wide_out = out;
  wide_out.set_element_type(wide[0].element_type());
  TPUSIM_ASSIGN_OR_RETURN(Literal r, wide.size() == 1
                                         ? EvaluateUnary(op, wide[0], wide_out, opt)
                                         : EvaluateBinary(op, wide[0], wide[1], wide_out, opt));
  if (op == HloOpcode::kClz) {
    for (int64_t i = 0; i < r.element_count(); ++i) r.mutable_data<uint32_t>()[i] -= 28;
  }
  return ConvertLiteral(r, out.element_type(), opt.max_bytes);
}

}  // namespace

StatusOr<Literal> EvaluateUnary(HloOpcode opcode, const Literal& x, const Shape& out,
                                const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckSameDims(HloOpcodeString(opcode).data(), x, out));
  if (IsInt4(x.element_type()) && x.element_type() == out.element_type() &&
      opcode != HloOpcode::kCopy) {
    const Literal* operands[] = {&x};
    return Int4Widened(opcode, operands, out, options);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StatusOr<bool> st = PrimitiveTypeSwitch(x.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt4<T>) {  // only ops with another result type reach here
      return StatusOr<bool>(ElementTypeError(opcode, x.element_type()));
    } else {
      return UnaryTyped<T>(opcode, x, result, options);
    }
  });
  if (!st.ok()) return st.status();
  if (result.shape().dimensions() != out.dimensions() ||
      result.element_type() != out.element_type()) {
    return InvalidArgument(fmt::format("'{}' of {} cannot produce {}", HloOpcodeString(opcode),
                                       x.shape().ToString(false), out.ToString(false)));
  }
  if (opcode == HloOpcode::kCopy) result.ReshapeInPlace(out);
  return result;
}

StatusOr<Literal> EvaluateBinary(HloOpcode opcode, const Literal& a, const Literal& b,
                                 const Shape& out, const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckSameDims(HloOpcodeString(opcode).data(), a, out));
  TPUSIM_RETURN_IF_ERROR(CheckSameDims(HloOpcodeString(opcode).data(), b, out));
  if (a.element_type() != b.element_type() || a.element_type() != out.element_type()) {
    return InvalidArgument(fmt::format("'{}' mixes element types {}, {} -> {}",
                                       HloOpcodeString(opcode), PrimitiveTypeName(a.element_type()),
                                       PrimitiveTypeName(b.element_type()),
                                       PrimitiveTypeName(out.element_type())));
  }
  if (IsInt4(a.element_type())) {
    const Literal* operands[] = {&a, &b};
    return Int4Widened(opcode, operands, out, options);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StatusOr<bool> st = PrimitiveTypeSwitch(a.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt4<T>) {  // unreachable: Int4Widened
      return StatusOr<bool>(ElementTypeError(opcode, a.element_type()));
    } else {
      return BinaryTyped<T>(opcode, a, b, result, options);
    }
  });
  if (!st.ok()) return st.status();
  return result;
}

StatusOr<Literal> EvaluateCompare(ComparisonDirection direction, ComparisonType type,
                                  const Literal& a, const Literal& b, const Shape& out,
                                  const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckSameDims("compare", a, out));
  TPUSIM_RETURN_IF_ERROR(CheckSameDims("compare", b, out));
  if (a.element_type() != b.element_type() || out.element_type() != PrimitiveType::kPred) {
    return InvalidArgument(
        "compare: operands must share an element type and the result must be pred");
  }
  if (IsInt4(a.element_type())) {  // compared as 32-bit values, extended as `type` reads them
    const bool sign = type == ComparisonType::kSigned ||
                      (type != ComparisonType::kUnsigned && a.element_type() == PrimitiveType::kS4);
    TPUSIM_ASSIGN_OR_RETURN(Literal wa, WidenInt4(a, sign, options));
    TPUSIM_ASSIGN_OR_RETURN(Literal wb, WidenInt4(b, sign, options));
    return EvaluateCompare(direction, type, wa, wb, out, options);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  auto cmp = [direction](auto x, auto y) { return ew::CompareBy(direction, x, y); };
  PrimitiveTypeSwitch(a.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      const bool total_order = type == ComparisonType::kTotalOrder;
      MapBinary<T, bool>(a, b, result, options,
                         [&](T x, T y) { return ew::Compare(direction, total_order, x, y); });
    } else if constexpr (kIsInt<T>) {
      // An explicit SIGNED/UNSIGNED type reinterprets the bits (XLA allows type=UNSIGNED on s32).
      if (type == ComparisonType::kUnsigned) {
        using UT = std::make_unsigned_t<T>;
        MapBinary<T, bool>(a, b, result, options,
                           [&](T x, T y) { return cmp(static_cast<UT>(x), static_cast<UT>(y)); });
      } else if (type == ComparisonType::kSigned) {
        using ST = std::make_signed_t<T>;
        MapBinary<T, bool>(a, b, result, options,
                           [&](T x, T y) { return cmp(static_cast<ST>(x), static_cast<ST>(y)); });
      } else {
        MapBinary<T, bool>(a, b, result, options, [&](T x, T y) { return cmp(x, y); });
      }
    } else {
      MapBinary<T, bool>(a, b, result, options, [&](T x, T y) { return cmp(x, y); });
    }
  });
  return result;
}

StatusOr<Literal> EvaluateSelect(const Literal& pred, const Literal& on_true,
                                 const Literal& on_false, const Shape& out,
                                 const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckSameDims("select", on_true, out));
  TPUSIM_RETURN_IF_ERROR(CheckSameDims("select", on_false, out));
  if (pred.element_type() != PrimitiveType::kPred ||
      (pred.shape().rank() != 0 && pred.shape().dimensions() != out.dimensions())) {
    return InvalidArgument(fmt::format("select: predicate {} does not fit result {}",
                                       pred.shape().ToString(false), out.ToString(false)));
  }
  if (pred.shape().rank() == 0 && out.rank() != 0) {
    Literal result = pred.data<bool>()[0] ? on_true : on_false;
    result.ReshapeInPlace(out);
    return result;
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  PrimitiveTypeSwitch(out.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* p = pred.data<bool>();
    const T* t = on_true.data<T>();
    const T* f = on_false.data<T>();
    T* d = result.mutable_data<T>();
    const int64_t n = result.element_count();
    ParallelForBlocks(n, kMapBlock, options.threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = p[i] ? t[i] : f[i];
    });
  });
  return result;
}

StatusOr<Literal> EvaluateClamp(const Literal& lo, const Literal& x, const Literal& hi,
                                const Shape& out, const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckSameDims("clamp", x, out));
  for (const Literal* bound : {&lo, &hi}) {
    if (bound->shape().rank() != 0 && bound->shape().dimensions() != out.dimensions()) {
      return InvalidArgument(fmt::format("clamp: bound {} does not fit operand {}",
                                         bound->shape().ToString(false), out.ToString(false)));
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  PrimitiveTypeSwitch(out.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pl = lo.data<T>();
    const T* px = x.data<T>();
    const T* ph = hi.data<T>();
    const int64_t sl = lo.shape().rank() == 0 ? 0 : 1, sh = hi.shape().rank() == 0 ? 0 : 1;
    T* d = result.mutable_data<T>();
    const int64_t n = result.element_count();
    ParallelForBlocks(n, kMapBlock, options.threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = ew::Min(ew::Max(px[i], pl[i * sl]), ph[i * sh]);
    });
  });
  return result;
}

StatusOr<Literal> EvaluateConvert(const Literal& x, const Shape& out,
                                  const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckSameDims("convert", x, out));
  TPUSIM_ASSIGN_OR_RETURN(Literal result, ConvertLiteral(x, out.element_type(), options.max_bytes));
  result.ReshapeInPlace(out);
  return result;
}

StatusOr<Literal> EvaluateBitcastConvert(const Literal& x, const Shape& out,
                                         const KernelOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  if (result.size_bytes() != x.size_bytes()) {
    return InvalidArgument(fmt::format("bitcast-convert: {} and {} differ in byte size",
                                       x.shape().ToString(false), out.ToString(false)));
  }
  if (result.size_bytes() > 0) {
    std::memcpy(result.mutable_raw(), x.raw(), static_cast<size_t>(x.size_bytes()));
  }
  if (out.element_type() == PrimitiveType::kPred) {  // keep bools canonical (0/1)
    uint8_t* d = result.mutable_raw();
    for (int64_t i = 0; i < result.size_bytes(); ++i) d[i] = d[i] != 0;
  }
  return result;
}

StatusOr<Literal> EvaluateReducePrecision(const Literal& x, int64_t exponent_bits,
                                          int64_t mantissa_bits, const KernelOptions& options) {
  if (!IsFloatingPoint(x.element_type()) || exponent_bits < 1 || exponent_bits > 11 ||
      mantissa_bits < 0 || mantissa_bits > 52) {
    return InvalidArgument(
        fmt::format("reduce-precision: bad exponent_bits={} mantissa_bits={} for {}", exponent_bits,
                    mantissa_bits, x.shape().ToString(false)));
  }
  const int max_exp = (1 << (exponent_bits - 1)) - 1;  // IEEE bias
  const int min_exp = 1 - max_exp;                      // smallest normal: 2^min_exp
  // The element type's own exponent width and smallest normal exponent.
  const PrimitiveType type = x.element_type();
  const int src_exponent_bits = type == PrimitiveType::kF16   ? 5
                                : type == PrimitiveType::kF64 ? 11
                                                              : 8;  // f32, bf16
  const int src_min_exp = 2 - (1 << (src_exponent_bits - 1));
  const bool reduces_exponent = exponent_bits < src_exponent_bits;
  const double smallest_normal = std::ldexp(1.0, min_exp);
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(x.shape(), options.max_bytes));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const double v = x.GetAsDouble(i);
    if (std::isnan(v)) {
      result.SetFromDouble(i, mantissa_bits > 0 ? v : std::numeric_limits<double>::infinity());
      continue;
    }
    // Rounding at the value's own exponent: the element type's subnormal quantum below its
    // smallest normal (rounding its bits), no lower limit otherwise (the flush decides).
    double r = RoundToFloatFormat(v, static_cast<int>(mantissa_bits),
                                  reduces_exponent ? -1022 : src_min_exp,
                                  reduces_exponent ? max_exp : 1023);
    if (reduces_exponent && r != 0.0 && std::fabs(r) < smallest_normal) r = std::copysign(0.0, r);
    result.SetFromDouble(i, r);
  }
  return result;
}

}  // namespace tpusim::hlo
