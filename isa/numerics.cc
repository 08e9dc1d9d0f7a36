#include "isa/numerics.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/check.h"

namespace tpusim::isa {

uint16_t F32ToBf16Bits(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (std::isnan(x)) return static_cast<uint16_t>((u >> 16) | 0x0040);  // keep sign, make quiet
  // Round to nearest even on the 16 dropped bits; a carry into the exponent gives the right result
  // (including rounding up to inf).
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7FFF + lsb;
  return static_cast<uint16_t>(u >> 16);
}

float Bf16BitsToF32(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

float RoundToBf16(float x) { return Bf16BitsToF32(F32ToBf16Bits(x)); }

uint16_t F32ToF16Bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (std::isnan(x)) return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x1FFu));
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520: inf (RNE)
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half, quantum 2^-24 (a carry gives 2^-14)
    const float q = std::nearbyint(std::ldexp(std::fabs(x), 24));  // exact scaling, RNE
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(q));
  }
  uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a >> 13) & 0x3FFu));
  const uint32_t rest = a & 0x1FFFu;                              // the 13 dropped mantissa bits
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;  // a carry reaches the exponent
  return static_cast<uint16_t>(sign | h);
}

float F16BitsToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);
    return (sign != 0) ? -v : v;
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7F800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e - 15 + 127) << 23) | (m << 13));
}

float Bf16Part(float x, PrecisionPart part) {
  float hi = RoundToBf16(x);
  if (part == PrecisionPart::kHi) return hi;
  if (!std::isfinite(hi)) return 0.0f;
  float r1 = x - hi;  // exact: hi is x rounded to 8 significant bits
  float lo = RoundToBf16(r1);
  if (part == PrecisionPart::kLo) return lo;
  return RoundToBf16(r1 - lo);  // exact subtraction again
}

float MxuDotF32(const float* a, const float* w, int64_t k, int64_t w_stride) {
  float s = 0.0f;
  for (int64_t i = 0; i < k; ++i) {
    float p = a[i] * w[i * w_stride];
    s = s + p;
  }
  return s;
}

int32_t WrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
int32_t WrapMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

int32_t MxuDotS32(const int32_t* a, const int32_t* w, int64_t k, int64_t w_stride) {
  int32_t s = 0;
  for (int64_t i = 0; i < k; ++i) s = WrapAdd(s, WrapMul(a[i], w[i * w_stride]));
  return s;
}

bool UnarySupports(UnaryOp op, DType t) {
  switch (op) {
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
    case UnaryOp::kSign:
      return t != DType::kPred;
    case UnaryOp::kNot:
      return !IsFloat(t);
    case UnaryOp::kClz:
    case UnaryOp::kPopcnt:
      return IsInteger(t);
    default:
      return IsFloat(t);
  }
}

bool BinarySupports(BinaryOp op, DType t) {
  switch (op) {
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
    case BinaryOp::kXor:
      return !IsFloat(t);
    case BinaryOp::kMax:
    case BinaryOp::kMin:
      return true;
    case BinaryOp::kAtan2:
      return IsFloat(t);
    case BinaryOp::kShl:
    case BinaryOp::kShrl:
    case BinaryOp::kShra:
    case BinaryOp::kMulhi:
      // s32 on the 32-bit pattern (HLO u32 is stored as s32); s8/u8/s16/u16 on their own width
      // (ShiftOperand).
      return IsInteger(t);
    default:
      return t != DType::kPred;
  }
}

bool CompareSupports(CompareOp, DType) { return true; }

template <typename T>
T MaxFloat(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}

template <typename T>
T MinFloat(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) = -0
  return a < b ? a : b;
}

template <typename T>
T ApplyUnaryFloat(UnaryOp op, T x) {
  switch (op) {
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return std::fabs(x);
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLog:
      return std::log(x);
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kLogistic:
      return T(1) / (T(1) + std::exp(-x));
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kRsqrt:
      return T(1) / std::sqrt(x);
    case UnaryOp::kFloor:
      return std::floor(x);
    case UnaryOp::kCeil:
      return std::ceil(x);
    case UnaryOp::kRoundNe:
      return std::nearbyint(x);  // the default rounding mode is to-nearest-even
    case UnaryOp::kSign:
      if (std::isnan(x)) return x;
      return x > 0 ? T(1) : (x < 0 ? T(-1) : x);
    case UnaryOp::kNot:
    case UnaryOp::kClz:
    case UnaryOp::kPopcnt:
      return x;  // not defined for floats (UnarySupports); never reached
    case UnaryOp::kExpm1:
      return std::expm1(x);
    case UnaryOp::kLog1p:
      return std::log1p(x);
    case UnaryOp::kSin:
      return std::sin(x);
    case UnaryOp::kCos:
      return std::cos(x);
    case UnaryOp::kErf:
      return std::erf(x);
    case UnaryOp::kRoundAfz:
      return std::round(x);
    case UnaryOp::kTan:
      return std::tan(x);
    case UnaryOp::kCbrt:
      return std::cbrt(x);
    case UnaryOp::kAcos:
      return std::acos(x);
    case UnaryOp::kAcosh:
      return std::acosh(x);
    case UnaryOp::kAsin:
      return std::asin(x);
    case UnaryOp::kAsinh:
      return std::asinh(x);
    case UnaryOp::kAtan:
      return std::atan(x);
    case UnaryOp::kAtanh:
      return std::atanh(x);
    case UnaryOp::kCosh:
      return std::cosh(x);
    case UnaryOp::kSinh:
      return std::sinh(x);
  }
  return x;
}

template <typename T>
T ApplyBinaryFloat(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMax:
      return MaxFloat(a, b);
    case BinaryOp::kMin:
      return MinFloat(a, b);
    case BinaryOp::kPow:
      return std::pow(a, b);
    case BinaryOp::kRem:
      return std::fmod(a, b);
    case BinaryOp::kAtan2:
      return std::atan2(a, b);
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
    case BinaryOp::kXor:
    case BinaryOp::kShl:
    case BinaryOp::kShrl:
    case BinaryOp::kShra:
    case BinaryOp::kMulhi:
      return a;  // integer-only (BinarySupports); never reached
  }
  return a;
}

bool CompareF(CompareOp op, float a, float b) { return CompareValues(op, a, b); }

template float MaxFloat<float>(float, float);
template double MaxFloat<double>(double, double);
template float MinFloat<float>(float, float);
template double MinFloat<double>(double, double);
template float ApplyUnaryFloat<float>(UnaryOp, float);
template double ApplyUnaryFloat<double>(UnaryOp, double);
template float ApplyBinaryFloat<float>(BinaryOp, float, float);
template double ApplyBinaryFloat<double>(BinaryOp, double, double);

float ActivateF(Activation act, float x) {
  switch (act) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return std::isnan(x) ? x : (x > 0.0f ? x : 0.0f);
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kLogistic:
      return 1.0f / (1.0f + std::exp(-x));
  }
  return x;
}

int32_t ActivateI(Activation act, int32_t x) {
  return act == Activation::kRelu ? (x > 0 ? x : 0) : x;
}

int32_t SaturateToS8(int32_t x) { return x > 127 ? 127 : (x < -128 ? -128 : x); }

}  // namespace tpusim::isa

namespace tpusim::isa {

Float8Format Float8FormatOf(DType t) {
  switch (t) {
    case DType::kF8E4M3FN:
      return Float8Format::kE4M3FN;
    case DType::kF8E5M2:
      return Float8Format::kE5M2;
    case DType::kF8E4M3:
      return Float8Format::kE4M3;
    case DType::kF8E3M4:
      return Float8Format::kE3M4;
    case DType::kF8E4M3FNUZ:
      return Float8Format::kE4M3FNUZ;
    case DType::kF8E5M2FNUZ:
      return Float8Format::kE5M2FNUZ;
    case DType::kF8E4M3B11FNUZ:
      return Float8Format::kE4M3B11FNUZ;
    case DType::kF8E8M0FNU:
      return Float8Format::kE8M0FNU;
    default:
      break;
  }
  TPUSIM_CHECK(false) << "not an f8 type: " << Name(t);
  return Float8Format::kE4M3FN;
}

float LoadFloat(const void* p, DType t) {
  if (t == DType::kF64) {
    double d;
    std::memcpy(&d, p, 8);
    return static_cast<float>(d);  // round to nearest even, as XLA's convert f64 -> f32
  }
  if (IsFloat8(t)) {
    return Float8ToFloat(Float8FormatOf(t), *static_cast<const uint8_t*>(p));
  }
  if (t == DType::kBF16 || t == DType::kF16) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return t == DType::kBF16 ? Bf16BitsToF32(b) : F16BitsToF32(b);
  }
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

int64_t LoadInt(const void* p, DType t) {
  if (t == DType::kPred) return *static_cast<const uint8_t*>(p) != 0 ? 1 : 0;
  uint64_t u = 0;
  std::memcpy(&u, p, static_cast<size_t>(DTypeBytes(t)));  // little-endian: the low bytes
  return NormalizeInt(static_cast<int64_t>(u), t);
}

void StoreFloat(void* p, DType t, float v) {
  if (t == DType::kF64) {
    const double d = v;  // exact
    std::memcpy(p, &d, 8);
    return;
  }
  if (IsFloat8(t)) {
    *static_cast<uint8_t*>(p) = Float8FromDouble(Float8FormatOf(t), v);
    return;
  }
  if (t == DType::kBF16 || t == DType::kF16) {
    uint16_t b = t == DType::kBF16 ? F32ToBf16Bits(v) : F32ToF16Bits(v);
    std::memcpy(p, &b, 2);
  } else {
    std::memcpy(p, &v, 4);
  }
}

void StoreInt(void* p, DType t, int64_t v) {
  if (t == DType::kPred) {
    *static_cast<uint8_t*>(p) = v != 0 ? 1 : 0;
    return;
  }
  // s4/u4 (one per byte): the byte holds the 4-bit value, sign-extended for s4, as LoadInt reads
  // it and as the evaluator's Literal holds it.
  const auto u = static_cast<uint64_t>(IntBits(t) == 4 ? NormalizeInt(v, t) : v);
  std::memcpy(p, &u, static_cast<size_t>(DTypeBytes(t)));  // little-endian: the low bytes
}

void LoadFloats(const char* p, DType t, uint64_t n, float* out) {
  if (t == DType::kF32) {
    std::memcpy(out, p, n * 4);
  } else if (t == DType::kBF16) {
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t b;
      std::memcpy(&b, p + 2 * i, 2);
      out[i] = Bf16BitsToF32(b);
    }
  } else {
    const uint64_t eb = static_cast<uint64_t>(DTypeBytes(t));
    for (uint64_t i = 0; i < n; ++i) out[i] = LoadFloat(p + i * eb, t);
  }
}

namespace {
// LoadInts / StoreInts of a whole-byte integer type held in memory as I.
template <class I>
void LoadAs(const char* p, uint64_t n, int64_t* out) {
  for (uint64_t i = 0; i < n; ++i) {
    I v;
    std::memcpy(&v, p + sizeof(I) * i, sizeof(I));
    out[i] = static_cast<int64_t>(v);
  }
}
template <class I>
void StoreAs(char* p, uint64_t n, const int64_t* in) {
  for (uint64_t i = 0; i < n; ++i) {
    const auto v = static_cast<I>(static_cast<uint64_t>(in[i]));  // the low bits
    std::memcpy(p + sizeof(I) * i, &v, sizeof(I));
  }
}
}  // namespace

void LoadInts(const char* p, DType t, uint64_t n, int64_t* out) {
  switch (t) {
    case DType::kS8: return LoadAs<int8_t>(p, n, out);
    case DType::kS16: return LoadAs<int16_t>(p, n, out);
    case DType::kS32: return LoadAs<int32_t>(p, n, out);
    case DType::kU8: return LoadAs<uint8_t>(p, n, out);
    case DType::kU16: return LoadAs<uint16_t>(p, n, out);
    case DType::kU32: return LoadAs<uint32_t>(p, n, out);
    default: {
      const uint64_t eb = static_cast<uint64_t>(DTypeBytes(t));
      for (uint64_t i = 0; i < n; ++i) out[i] = LoadInt(p + i * eb, t);
    }
  }
}

void StoreFloats(char* p, DType t, uint64_t n, const float* in) {
  if (t == DType::kF32) {
    std::memcpy(p, in, n * 4);
  } else if (t == DType::kBF16) {
    for (uint64_t i = 0; i < n; ++i) {
      const uint16_t b = F32ToBf16Bits(in[i]);
      std::memcpy(p + 2 * i, &b, 2);
    }
  } else {
    const uint64_t eb = static_cast<uint64_t>(DTypeBytes(t));
    for (uint64_t i = 0; i < n; ++i) StoreFloat(p + i * eb, t, in[i]);
  }
}

void StoreInts(char* p, DType t, uint64_t n, const int64_t* in) {
  switch (t) {
    case DType::kS8:
    case DType::kU8: return StoreAs<uint8_t>(p, n, in);
    case DType::kS16:
    case DType::kU16: return StoreAs<uint16_t>(p, n, in);
    case DType::kS32:
    case DType::kU32: return StoreAs<uint32_t>(p, n, in);
    default: {
      const uint64_t eb = static_cast<uint64_t>(DTypeBytes(t));
      for (uint64_t i = 0; i < n; ++i) StoreInt(p + i * eb, t, in[i]);
    }
  }
}

}  // namespace tpusim::isa
