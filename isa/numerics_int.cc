// The VPU's integer arithmetic (numerics.h "Integer values"): every integer element type computed
// exactly in its own width, signed or unsigned as the type is, and the int <-> float conversions of
// vpu.convert. XLA's semantics: xla/hlo/evaluator (and its operation-semantics doc) for division by
// zero, MIN/-1, shifts past the width and saturating float -> int conversion.
#include <bit>
#include <cmath>
#include <limits>

#include "common/mulhi.h"
#include "isa/numerics.h"

namespace tpusim::isa {
namespace {

// Low `bits` bits of u (bits in [1, 64]).
uint64_t LowBits(uint64_t u, int bits) { return bits >= 64 ? u : u & ((uint64_t{1} << bits) - 1); }

// Low `bits` bits of u, sign-extended from bit bits-1.
int64_t SignExtend(uint64_t u, int bits) {
  if (bits >= 64) return static_cast<int64_t>(u);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((LowBits(u, bits) ^ sign) - sign);
}

// The smallest value of signed type t (as an int64_t).
int64_t SignedMin(DType t) { return SignExtend(uint64_t{1} << (IntBits(t) - 1), IntBits(t)); }

// The shift amount b of type t, or -1 when it is outside [0, bits of t).
int64_t ShiftAmount(int64_t b, DType t) {
  const bool in_range = IsUnsigned(t) ? static_cast<uint64_t>(b) < static_cast<uint64_t>(IntBits(t))
                                      : b >= 0 && b < IntBits(t);
  return in_range ? b : -1;
}

int64_t Pow(int64_t a, int64_t b, DType t) {
  if (!IsUnsigned(t) && b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  uint64_t r = 1, base = static_cast<uint64_t>(a);
  for (uint64_t e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return NormalizeInt(static_cast<int64_t>(r), t);
}

int64_t Divide(int64_t a, int64_t b, DType t, bool rem) {
  if (b == 0) return rem ? a : NormalizeInt(-1, t);
  if (IsUnsigned(t)) {
    const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    return NormalizeInt(static_cast<int64_t>(rem ? ua % ub : ua / ub), t);
  }
  if (a == SignedMin(t) && b == -1) return rem ? 0 : a;
  return rem ? a % b : a / b;
}

int64_t Shift(BinaryOp op, int64_t a, int64_t b, DType t) {
  const int bits = IntBits(t);
  const int64_t s = ShiftAmount(b, t);
  switch (op) {
    case BinaryOp::kShl:
      return s < 0 ? 0 : NormalizeInt(static_cast<int64_t>(static_cast<uint64_t>(a) << s), t);
    case BinaryOp::kShrl:
      if (s < 0) return 0;
      return NormalizeInt(static_cast<int64_t>(LowBits(static_cast<uint64_t>(a), bits) >> s), t);
    default: {  // kShra: the sign bit of t's width is copied in, also for unsigned t
      const int64_t x = SignExtend(static_cast<uint64_t>(a), bits);
      if (s < 0) return NormalizeInt(x < 0 ? -1 : 0, t);
      return NormalizeInt(x >> s, t);
    }
  }
}

// a < b as t orders its values.
bool Less(int64_t a, int64_t b, DType t) {
  return IsUnsigned(t) ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}

}  // namespace

int64_t NormalizeInt(int64_t x, DType t) {
  if (t == DType::kPred) return x != 0 ? 1 : 0;
  const int bits = IntBits(t);
  const auto u = static_cast<uint64_t>(x);
  return IsUnsigned(t) ? static_cast<int64_t>(LowBits(u, bits)) : SignExtend(u, bits);
}

int64_t ApplyUnaryI(UnaryOp op, int64_t x, DType t) {
  switch (op) {
    case UnaryOp::kNeg:
      return NormalizeInt(static_cast<int64_t>(0u - static_cast<uint64_t>(x)), t);
    case UnaryOp::kAbs:
      if (IsUnsigned(t) || x >= 0) return x;
      return NormalizeInt(static_cast<int64_t>(0u - static_cast<uint64_t>(x)), t);
    case UnaryOp::kSign:
      if (IsUnsigned(t)) return x != 0 ? 1 : 0;
      return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case UnaryOp::kNot:
      return t == DType::kPred ? (x == 0 ? 1 : 0) : NormalizeInt(~x, t);
    case UnaryOp::kClz:  // leading zeros of t's own width
      return std::countl_zero(LowBits(static_cast<uint64_t>(x), IntBits(t))) - (64 - IntBits(t));
    case UnaryOp::kPopcnt:
      return std::popcount(LowBits(static_cast<uint64_t>(x), IntBits(t)));
    default:
      return x;  // float-only ops (UnarySupports); never reached
  }
}

int64_t ApplyBinaryI(BinaryOp op, int64_t a, int64_t b, DType t) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinaryOp::kAdd:
      return NormalizeInt(static_cast<int64_t>(ua + ub), t);
    case BinaryOp::kSub:
      return NormalizeInt(static_cast<int64_t>(ua - ub), t);
    case BinaryOp::kMul:
      return NormalizeInt(static_cast<int64_t>(ua * ub), t);
    case BinaryOp::kMulhi:
      return NormalizeInt(MulHi(a, b, IntBits(t), IsUnsigned(t)), t);
    case BinaryOp::kDiv:
      return Divide(a, b, t, /*rem=*/false);
    case BinaryOp::kRem:
      return Divide(a, b, t, /*rem=*/true);
    case BinaryOp::kMax:
      return Less(a, b, t) ? b : a;
    case BinaryOp::kMin:
      return Less(b, a, t) ? b : a;
    case BinaryOp::kAnd:
      return a & b;
    case BinaryOp::kOr:
      return a | b;
    case BinaryOp::kXor:
      return a ^ b;
    case BinaryOp::kPow:
      return Pow(a, b, t);
    case BinaryOp::kShl:
    case BinaryOp::kShrl:
    case BinaryOp::kShra:
      return Shift(op, a, b, t);
    case BinaryOp::kAtan2:
      return a;  // float-only; never reached
  }
  return a;
}

bool CompareI(CompareOp op, int64_t a, int64_t b, DType t) {
  return IsUnsigned(t) ? CompareValues(op, static_cast<uint64_t>(a), static_cast<uint64_t>(b))
                       : CompareValues(op, a, b);
}

int64_t ReduceI(ReduceOp op, int64_t acc, int64_t x, DType t) {
  if (t == DType::kPred) return op == ReduceOp::kMin ? (acc & x) : (acc | x);
  switch (op) {
    case ReduceOp::kSum:
      return ApplyBinaryI(BinaryOp::kAdd, acc, x, t);
    case ReduceOp::kMax:
      return ApplyBinaryI(BinaryOp::kMax, acc, x, t);
    case ReduceOp::kMin:
      return ApplyBinaryI(BinaryOp::kMin, acc, x, t);
  }
  return acc;
}

int64_t FloatToInt(double x, DType t) {
  if (t == DType::kPred) return x != 0.0 || std::isnan(x) ? 1 : 0;
  if (std::isnan(x)) return 0;
  const int bits = IntBits(t);
  // The range limits are powers of two, exact in double: [-2^(bits-1), 2^(bits-1)) signed,
  // [0, 2^bits) unsigned.
  const double d = std::trunc(x);
  if (IsUnsigned(t)) {
    if (d <= 0) return 0;
    if (d >= std::ldexp(1.0, bits)) return NormalizeInt(-1, t);  // all ones
    return static_cast<int64_t>(static_cast<uint64_t>(d));
  }
  const double limit = std::ldexp(1.0, bits - 1);
  if (d < -limit) return SignedMin(t);
  if (d >= limit) return ~SignedMin(t);  // the largest value
  return static_cast<int64_t>(d);
}

float IntToFloat(int64_t x, DType from, DType to) {
  const bool u = IsUnsigned(from);
  if (to == DType::kF32) {  // one rounding, to nearest even
    return u ? static_cast<float>(static_cast<uint64_t>(x)) : static_cast<float>(x);
  }
  // The other float types: the integer as a double (exact below 2^53, as the evaluator's
  // ConvertElement takes it), rounded once (NarrowF64).
  return NarrowF64(IntToF64(x, from), to);
}

double IntToF64(int64_t x, DType from) {
  return IsUnsigned(from) ? static_cast<double>(static_cast<uint64_t>(x)) : static_cast<double>(x);
}

float NarrowF64(double d, DType to) {
  auto f = static_cast<float>(d);  // one rounding to nearest even
  if (to == DType::kF32 || std::isnan(d)) return f;
  // bf16, f16, f8: rounded to odd at f32 (24 bits >= 11 + 2), then once to nearest even by the
  // store (the f8 formats as common/float8.h rounds them).
  if (static_cast<double>(f) != d) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
  }
  char bits[8];  // any element type fits
  StoreFloat(bits, to, f);
  return LoadFloat(bits, to);
}

}  // namespace tpusim::isa
