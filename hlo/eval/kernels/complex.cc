#include "hlo/eval/kernels/complex.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <complex>
#include <cstring>

#include "hlo/eval/kernels/map.h"

namespace tpusim::hlo {
namespace {

constexpr int64_t kBlock = int64_t{1} << 14;


template <typename R>
StatusOr<bool> UnaryTyped(HloOpcode op, const Literal& x, Literal& out, const KernelOptions& opt) {
  using C = std::complex<R>;
  auto cc = [&](auto f) -> StatusOr<bool> {
    MapUnary<C, C>(x, out, opt, f, kBlock);
    return true;
  };
  auto cr = [&](auto f) -> StatusOr<bool> {
    MapUnary<C, R>(x, out, opt, f, kBlock);
    return true;
  };
  switch (op) {
    case HloOpcode::kCopy:
      out = x;
      return true;
    case HloOpcode::kReal:
      return cr([](C z) { return z.real(); });
    case HloOpcode::kImag:
      return cr([](C z) { return z.imag(); });
    case HloOpcode::kAbs:
      return cr([](C z) { return std::abs(z); });
    case HloOpcode::kNegate:
      return cc([](C z) { return -z; });
    case HloOpcode::kSign:
      return cc([](C z) { return z == C(0) ? z : z / std::abs(z); });
    case HloOpcode::kExp:
      return cc([](C z) { return std::exp(z); });
    case HloOpcode::kExpm1:
      return cc([](C z) { return std::exp(z) - C(1); });
    case HloOpcode::kLog:
      return cc([](C z) { return std::log(z); });
    case HloOpcode::kLog1p:
      return cc([](C z) { return std::log(C(1) + z); });
    case HloOpcode::kLogistic:
      return cc([](C z) { return C(1) / (C(1) + std::exp(-z)); });
    case HloOpcode::kSqrt:
      return cc([](C z) { return std::sqrt(z); });
    case HloOpcode::kRsqrt:
      return cc([](C z) { return C(1) / std::sqrt(z); });
    case HloOpcode::kCbrt:
      return cc([](C z) { return std::pow(z, C(R(1) / R(3))); });
    case HloOpcode::kSin:
      return cc([](C z) { return std::sin(z); });
    case HloOpcode::kCos:
      return cc([](C z) { return std::cos(z); });
    case HloOpcode::kTan:
      return cc([](C z) { return std::tan(z); });
    case HloOpcode::kTanh:
      return cc([](C z) { return std::tanh(z); });
    case HloOpcode::kSinh:
      return cc([](C z) { return std::sinh(z); });
    case HloOpcode::kCosh:
      return cc([](C z) { return std::cosh(z); });
    case HloOpcode::kAsin:
      return cc([](C z) { return std::asin(z); });
    case HloOpcode::kAcos:
      return cc([](C z) { return std::acos(z); });
    case HloOpcode::kAtan:
      return cc([](C z) { return std::atan(z); });
    case HloOpcode::kAsinh:
      return cc([](C z) { return std::asinh(z); });
    case HloOpcode::kAcosh:
      return cc([](C z) { return std::acosh(z); });
    case HloOpcode::kAtanh:
      return cc([](C z) { return std::atanh(z); });
    default:
      return ElementTypeError(op, x.element_type());
  }
}

template <typename R>
StatusOr<bool> BinaryTyped(HloOpcode op, const Literal& a, const Literal& b, Literal& out,
                           const KernelOptions& opt) {
  using C = std::complex<R>;
  auto run = [&](auto f) -> StatusOr<bool> {
    MapBinary<C, C>(a, b, out, opt, f, kBlock);
    return true;
  };
  switch (op) {
    case HloOpcode::kAdd:
      return run([](C x, C y) { return x + y; });
    case HloOpcode::kSubtract:
      return run([](C x, C y) { return x - y; });
    case HloOpcode::kMultiply:
      return run([](C x, C y) { return x * y; });
    case HloOpcode::kDivide:
      return run([](C x, C y) { return x / y; });
    case HloOpcode::kPower:
      return run([](C x, C y) { return std::pow(x, y); });
    default:
      return ElementTypeError(op, a.element_type());
  }
}

Status CheckDims(HloOpcode op, const Literal& x, const Shape& out) {
  if (!x.IsArray() || !out.IsArray() || x.shape().dimensions() != out.dimensions()) {
    return InvalidArgument(fmt::format("'{}': operand {} does not match result {}",
                                       HloOpcodeString(op), x.shape().ToString(false),
                                       out.ToString(false)));
  }
  return OkStatus();
}

}  // namespace

StatusOr<Literal> ComplexUnary(HloOpcode op, const Literal& x, const Shape& out,
                               const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckDims(op, x, out));
  const PrimitiveType t = x.element_type();
  const bool to_real = op == HloOpcode::kReal || op == HloOpcode::kImag || op == HloOpcode::kAbs;
  const PrimitiveType want = to_real ? ComplexComponentType(t) : t;
  if (!IsComplex(t) || out.element_type() != want) {
    return InvalidArgument(fmt::format("'{}' of {} cannot produce {}", HloOpcodeString(op),
                                       x.shape().ToString(false), out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StatusOr<bool> st = t == PrimitiveType::kC64 ? UnaryTyped<float>(op, x, result, options)
                                               : UnaryTyped<double>(op, x, result, options);
  if (!st.ok()) return st.status();
  if (op == HloOpcode::kCopy) result.ReshapeInPlace(out);
  return result;
}

StatusOr<Literal> ComplexBinary(HloOpcode op, const Literal& a, const Literal& b, const Shape& out,
                                const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckDims(op, a, out));
  TPUSIM_RETURN_IF_ERROR(CheckDims(op, b, out));
  const PrimitiveType t = a.element_type();
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  if (op == HloOpcode::kComplex) {
    auto compose = [&](auto tag) {
      using R = typename decltype(tag)::type;
      MapBinary<R, std::complex<R>>(
          a, b, result, options, [](R re, R im) { return std::complex<R>(re, im); }, kBlock);
    };
    if (t == PrimitiveType::kF32 && b.element_type() == t && out.element_type() == PrimitiveType::kC64) {
      compose(TypeTag<float>{});
    } else if (t == PrimitiveType::kF64 && b.element_type() == t &&
               out.element_type() == PrimitiveType::kC128) {
      compose(TypeTag<double>{});
    } else {
      return InvalidArgument(fmt::format("'complex' takes (f32, f32) -> c64 or (f64, f64) -> "
                                         "c128, got ({}, {}) -> {}",
                                         PrimitiveTypeName(t),
                                         PrimitiveTypeName(b.element_type()),
                                         PrimitiveTypeName(out.element_type())));
    }
    return result;
  }
  if (!IsComplex(t) || b.element_type() != t || out.element_type() != t) {
    return InvalidArgument(fmt::format("'{}' mixes element types {}, {} -> {}",
                                       HloOpcodeString(op), PrimitiveTypeName(t),
                                       PrimitiveTypeName(b.element_type()),
                                       PrimitiveTypeName(out.element_type())));
  }
  StatusOr<bool> st = t == PrimitiveType::kC64
                          ? BinaryTyped<float>(op, a, b, result, options)
                          : BinaryTyped<double>(op, a, b, result, options);
  if (!st.ok()) return st.status();
  return result;
}

StatusOr<Literal> ComplexCompare(ComparisonDirection direction, const Literal& a,
                                 const Literal& b, const Shape& out, const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckDims(HloOpcode::kCompare, a, out));
  TPUSIM_RETURN_IF_ERROR(CheckDims(HloOpcode::kCompare, b, out));
  const PrimitiveType t = a.element_type();
  if (b.element_type() != t || out.element_type() != PrimitiveType::kPred) {
    return InvalidArgument("compare: operands must share an element type and the result be pred");
  }
  if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
    return Unimplemented(fmt::format("compare direction={} is not defined for element type {}",
                                     ComparisonDirectionName(direction), PrimitiveTypeName(t)));
  }
  const bool eq = direction == ComparisonDirection::kEq;
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  auto run = [&](auto tag) {
    using C = std::complex<typename decltype(tag)::type>;
    MapBinary<C, bool>(
        a, b, result, options, [eq](C x, C y) { return (x == y) == eq; }, kBlock);
  };
  if (t == PrimitiveType::kC64) {
    run(TypeTag<float>{});
  } else {
    run(TypeTag<double>{});
  }
  return result;
}

StatusOr<Literal> ComplexSelect(const Literal& pred, const Literal& on_true,
                                const Literal& on_false, const Shape& out,
                                const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckDims(HloOpcode::kSelect, on_true, out));
  TPUSIM_RETURN_IF_ERROR(CheckDims(HloOpcode::kSelect, on_false, out));
  const bool scalar_pred = pred.IsArray() && pred.shape().rank() == 0;
  if (!pred.IsArray() || pred.element_type() != PrimitiveType::kPred ||
      (!scalar_pred && pred.shape().dimensions() != out.dimensions()) ||
      on_true.element_type() != out.element_type() ||
      on_false.element_type() != out.element_type()) {
    return InvalidArgument(fmt::format("select: {} ? {} : {} cannot produce {}",
                                       pred.shape().ToString(false),
                                       on_true.shape().ToString(false),
                                       on_false.shape().ToString(false), out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const int64_t eb = ByteWidth(out.element_type());
  const bool* p = pred.data<bool>();
  uint8_t* d = result.mutable_raw();
  for (int64_t i = 0; i < result.element_count(); ++i) {
    const Literal& from = p[scalar_pred ? 0 : i] ? on_true : on_false;
    std::memcpy(d + i * eb, from.raw() + i * eb, static_cast<size_t>(eb));
  }
  return result;
}

Status ComplexBatchedGemm(const Literal& a, const Literal& w, Literal& c, int64_t batch, int64_t m,
                          int64_t k, int64_t n) {
  auto run = [&](auto tag) {
    using C = std::complex<typename decltype(tag)::type>;
    using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (int64_t b = 0; b < batch; ++b) {
      Eigen::Map<const Mat> ma(a.data<C>() + b * m * k, m, k);
      Eigen::Map<const Mat> mw(w.data<C>() + b * k * n, k, n);
      Eigen::Map<Mat> mc(c.mutable_data<C>() + b * m * n, m, n);
      if (k == 0) {
        mc.setZero();
      } else {
        mc.noalias() = ma * mw;
      }
    }
  };
  const PrimitiveType t = c.element_type();
  if (a.element_type() != t || w.element_type() != t || !IsComplex(t)) {
    return InvalidArgument(fmt::format("complex dot: {} x {} -> {} mixes element types",
                                       PrimitiveTypeName(a.element_type()),
                                       PrimitiveTypeName(w.element_type()), PrimitiveTypeName(t)));
  }
  if (t == PrimitiveType::kC64) {
    run(TypeTag<float>{});
  } else {
    run(TypeTag<double>{});
  }
  return OkStatus();
}

}  // namespace tpusim::hlo
