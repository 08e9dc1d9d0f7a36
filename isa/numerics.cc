#include "isa/numerics.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

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
      // s32 on the 32-bit pattern (HLO u32 is stored as s32); s8/u8/s16/u16 on their own width
      // (ShiftOperand).
      return IsInteger(t);
    default:
      return t != DType::kPred;
  }
}

bool CompareSupports(CompareOp, DType) { return true; }

float MaxF(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}

float MinF(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) = -0
  return a < b ? a : b;
}

float ApplyUnaryF(UnaryOp op, float x) {
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
      return 1.0f / (1.0f + std::exp(-x));
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kRsqrt:
      return 1.0f / std::sqrt(x);
    case UnaryOp::kFloor:
      return std::floor(x);
    case UnaryOp::kCeil:
      return std::ceil(x);
    case UnaryOp::kRoundNe:
      return std::nearbyint(x);  // the default rounding mode is to-nearest-even
    case UnaryOp::kSign:
      if (std::isnan(x)) return x;
      return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);
    case UnaryOp::kNot:
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
  }
  return x;
}

int32_t ApplyUnaryI(UnaryOp op, int32_t x, DType t) {
  switch (op) {
    case UnaryOp::kNeg:
      return static_cast<int32_t>(0u - static_cast<uint32_t>(x));
    case UnaryOp::kAbs:
      return x < 0 ? static_cast<int32_t>(0u - static_cast<uint32_t>(x)) : x;
    case UnaryOp::kSign:
      return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case UnaryOp::kNot:
      return t == DType::kPred ? (x == 0 ? 1 : 0) : ~x;
    default:
      return x;  // float-only ops (UnarySupports); never reached
  }
}

float ApplyBinaryF(BinaryOp op, float a, float b) {
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
      return MaxF(a, b);
    case BinaryOp::kMin:
      return MinF(a, b);
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
      return a;  // integer-only (BinarySupports); never reached
  }
  return a;
}

int32_t ApplyBinaryI(BinaryOp op, int32_t a, int32_t b) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  switch (op) {
    case BinaryOp::kAdd:
      return WrapAdd(a, b);
    case BinaryOp::kSub:
      return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
    case BinaryOp::kMul:
      return WrapMul(a, b);
    case BinaryOp::kDiv:
      if (b == 0) return -1;
      if (a == kMin && b == -1) return kMin;
      return a / b;
    case BinaryOp::kRem:
      if (b == 0) return a;
      if (a == kMin && b == -1) return 0;
      return a % b;
    case BinaryOp::kMax:
      return a > b ? a : b;
    case BinaryOp::kMin:
      return a < b ? a : b;
    case BinaryOp::kAnd:
      return a & b;
    case BinaryOp::kOr:
      return a | b;
    case BinaryOp::kXor:
      return a ^ b;
    case BinaryOp::kPow: {
      if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
      int32_t r = 1, base = a;
      for (uint32_t e = static_cast<uint32_t>(b); e != 0; e >>= 1) {
        if (e & 1) r = WrapMul(r, base);
        base = WrapMul(base, base);
      }
      return r;
    }
    case BinaryOp::kShl:  // XLA: a shift by >= 32 (or < 0) gives 0, or the sign for shra
      return b < 0 || b >= 32 ? 0 : static_cast<int32_t>(static_cast<uint32_t>(a) << b);
    case BinaryOp::kShrl:
      return b < 0 || b >= 32 ? 0 : static_cast<int32_t>(static_cast<uint32_t>(a) >> b);
    case BinaryOp::kShra:
      return b < 0 || b >= 32 ? (a < 0 ? -1 : 0) : a >> b;
    case BinaryOp::kAtan2:
      return a;  // float-only; never reached
  }
  return a;
}

bool CompareF(CompareOp op, float a, float b) {
  switch (op) {
    case CompareOp::kEq:
      return a == b;
    case CompareOp::kNe:
      return a != b;
    case CompareOp::kLt:
      return a < b;
    case CompareOp::kLe:
      return a <= b;
    case CompareOp::kGt:
      return a > b;
    case CompareOp::kGe:
      return a >= b;
  }
  return false;
}

bool CompareI(CompareOp op, int32_t a, int32_t b) {
  switch (op) {
    case CompareOp::kEq:
      return a == b;
    case CompareOp::kNe:
      return a != b;
    case CompareOp::kLt:
      return a < b;
    case CompareOp::kLe:
      return a <= b;
    case CompareOp::kGt:
      return a > b;
    case CompareOp::kGe:
      return a >= b;
  }
  return false;
}

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

int32_t F32ToS32Saturating(float x) {
  if (std::isnan(x)) return 0;
  if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (x < -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(x);  // truncates toward zero; in range here
}

int32_t WrapToS8(int32_t x) { return static_cast<int8_t>(static_cast<uint8_t>(x & 0xFF)); }

int32_t SaturateToS8(int32_t x) { return x > 127 ? 127 : (x < -128 ? -128 : x); }

int32_t SaturateToInt(int32_t x, DType t) {
  auto clamp = [x](int32_t lo, int32_t hi) { return x > hi ? hi : (x < lo ? lo : x); };
  switch (t) {
    case DType::kS8:
      return clamp(-128, 127);
    case DType::kU8:
      return clamp(0, 255);
    case DType::kS16:
      return clamp(-32768, 32767);
    case DType::kU16:
      return clamp(0, 65535);
    default:
      return x;
  }
}

int32_t ShiftOperand(BinaryOp op, int32_t x, DType t) {
  const int bits = DTypeBytes(t) * 8;
  if (bits >= 32 || t == DType::kPred || !IsInteger(t)) return x;
  const uint32_t mask = (1u << bits) - 1;
  const uint32_t low = static_cast<uint32_t>(x) & mask;
  if (op == BinaryOp::kShrl) return static_cast<int32_t>(low);
  if (op == BinaryOp::kShra) {
    const uint32_t sign = 1u << (bits - 1);
    return static_cast<int32_t>((low ^ sign)) - static_cast<int32_t>(sign);
  }
  return x;
}

}  // namespace tpusim::isa

namespace tpusim::isa {

float LoadFloat(const void* p, DType t) {
  if (t == DType::kBF16 || t == DType::kF16) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return t == DType::kBF16 ? Bf16BitsToF32(b) : F16BitsToF32(b);
  }
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

int32_t LoadInt(const void* p, DType t) {
  switch (t) {
    case DType::kS8:
      return static_cast<int8_t>(*static_cast<const uint8_t*>(p));
    case DType::kU8:
      return *static_cast<const uint8_t*>(p);
    case DType::kS16:
    case DType::kU16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return t == DType::kS16 ? static_cast<int16_t>(h) : static_cast<int32_t>(h);
    }
    case DType::kPred:
      return *static_cast<const uint8_t*>(p) != 0 ? 1 : 0;
    default: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

void StoreFloat(void* p, DType t, float v) {
  if (t == DType::kBF16 || t == DType::kF16) {
    uint16_t b = t == DType::kBF16 ? F32ToBf16Bits(v) : F32ToF16Bits(v);
    std::memcpy(p, &b, 2);
  } else {
    std::memcpy(p, &v, 4);
  }
}

void StoreInt(void* p, DType t, int32_t v) {
  switch (t) {
    case DType::kS8:
    case DType::kU8:
      *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v & 0xFF);
      break;
    case DType::kS16:
    case DType::kU16: {
      const auto h = static_cast<uint16_t>(v & 0xFFFF);
      std::memcpy(p, &h, 2);
      break;
    }
    case DType::kPred:
      *static_cast<uint8_t*>(p) = v != 0 ? 1 : 0;
      break;
    default:
      std::memcpy(p, &v, 4);
  }
}

}  // namespace tpusim::isa
