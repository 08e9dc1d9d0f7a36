// The ISA's arithmetic, bit for bit. The interpreter uses these functions, and the simulator's MXU
// and VPU models must call them too (or reproduce them exactly), so that a program gives the same
// bits on every executor. All of it is compiled with -ffp-contract=off: every multiply and add
// rounds.
//
// Conventions (docs/isa.md "Numerics"):
//  * f32 is IEEE binary32 with round-to-nearest-even, subnormals kept (no flush to zero).
//  * bf16 -> f32 is exact; f32 -> bf16 rounds to nearest even, NaN stays NaN (quiet), inf stays
//  inf.
//  * The VPU computes bf16/f16/f32 in f32 and rounds the result once to the destination type;
//    f64 in binary64 (ApplyUnaryFloat<double>, ...: the double-precision <cmath> functions);
//    integers (s8/u8/s16/u16/s32/u32/s64/u64) and pred compute exactly in their own width with
//    two's complement wrap-around: a narrow integer is widened exactly on load and wrapped to its
//    width on store, and unsigned types compare, divide and shift as unsigned, so every op gives
//    the type's own results. (The VPU's lanes are 32 bits: a 64-bit element op is costed as
//    several 32-bit ops, core.vpu.ops_per_64bit_element; its values are exact.)
//  * Transcendentals are glibc's single-precision functions (expf, logf, tanhf, ...); logistic(x) =
//    1 / (1 + expf(-x)); rsqrt(x) = 1 / sqrtf(x) (two roundings).
#pragma once

#include <cstdint>

#include "common/float8.h"
#include "isa/types.h"

namespace tpusim::isa {

/// f32 -> bf16 bits, round to nearest even; a NaN becomes a quiet NaN with the same sign.
uint16_t F32ToBf16Bits(float x);
float Bf16BitsToF32(uint16_t b);
/// bf16(x) as an f32 value.
float RoundToBf16(float x);

/// f32 -> IEEE binary16 bits, round to nearest even, subnormals kept; |x| >= 65520 becomes inf; a
/// NaN becomes a quiet NaN with the same sign. f16 -> f32 is exact.
uint16_t F32ToF16Bits(float x);
float F16BitsToF32(uint16_t h);

/// The bf16 part of an f32 that one MXU precision pass uses (XLA's Split3xToBF16: high, mid, low):
///   hi = bf16(x), lo = bf16(x - hi), lolo = bf16(x - hi - lo), each subtraction exact in f32.
/// If hi is not finite (x is inf/NaN or rounds to inf), lo = lolo = 0.
float Bf16Part(float x, PrecisionPart part);

/// One MXU output column, exactly as the array computes it (DESIGN.md §4): s = 0; for k in [0, K):
/// s = fl(s + a[k] * w[k * w_stride]). a and w hold bf16-exact values, so every product is exact
/// unless it overflows or underflows f32.
float MxuDotF32(const float* a, const float* w, int64_t k, int64_t w_stride);
/// The int8 path: sum of a[k] * w[k * w_stride] in int32 with two's complement wrap-around.
int32_t MxuDotS32(const int32_t* a, const int32_t* w, int64_t k, int64_t w_stride);

/// Wrap-around int32 arithmetic (no undefined behaviour).
int32_t WrapAdd(int32_t a, int32_t b);
int32_t WrapMul(int32_t a, int32_t b);

/// Whether the VPU function is defined for the element type (verifier and interpreter use this):
/// unary float ops need a float type; neg/abs/sign work on integers too; not works on integers and
/// pred.
bool UnarySupports(UnaryOp op, DType t);
bool BinarySupports(BinaryOp op, DType t);
bool CompareSupports(CompareOp op, DType t);

// Integer values. The VPU's integer compute value of an element of type t is an int64_t holding
// the element's value in t's width: sign-extended for s8/s16/s32/s64, zero-extended for u8/u16/u32
// (u64: the 64 bits as they are), 0 or 1 for pred (LoadInt). Every integer function below takes
// and returns such values for the type it is given, so each type gets its own results: add, sub
// and mul wrap at t's width, compare/max/min/div/rem are signed or unsigned as t is.

/// x wrapped to t's width and extended back (the value StoreInt then LoadInt gives).
int64_t NormalizeInt(int64_t x, DType t);
/// Integer/pred unary: neg wraps, abs and sign of an unsigned value are x and (x != 0), not is
/// the bitwise complement (pred: logical).
int64_t ApplyUnaryI(UnaryOp op, int64_t x, DType t);
/// Integer binary: add/sub/mul wrap; div truncates toward zero with x/0 = -1 (all ones) and, for
/// signed t, MIN/-1 = MIN (XLA's semantics); rem = x - trunc(x/y)*y with x%0 = x and MIN%-1 = 0;
/// max/min/and/or/xor as usual; pow with a negative exponent = 0 except base 1 / -1; shl/shrl/shra
/// shift t's own bits (shrl zero-fills, shra copies the sign bit of t's width, also for unsigned
/// t), and a shift amount outside [0, bits of t) gives 0 (shra: the sign, 0 or -1).
int64_t ApplyBinaryI(BinaryOp op, int64_t a, int64_t b, DType t);
/// `a op b` with the operators of T (for a float: IEEE, NaN compares false except under ne).
template <typename T>
bool CompareValues(CompareOp op, T a, T b) {
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
/// Compare as t orders its values (unsigned t: as unsigned 64-bit).
bool CompareI(CompareOp op, int64_t a, int64_t b, DType t);
/// The reduction step of vpu.reduce, all-reduce and a scatter combiner: sum wraps, max/min as t
/// orders its values; pred: sum and max are or, min is and.
int64_t ReduceI(ReduceOp op, int64_t acc, int64_t x, DType t);

/// The float VPU functions on T = float (bf16/f16/f32/f8 compute in f32) or T = double (f64
/// computes in binary64): the same operators and <cmath> functions at T's precision, which is what
/// the reference evaluator does for each type (hlo/eval/kernels/elementwise.cc).
template <typename T>
T ApplyUnaryFloat(UnaryOp op, T x);
template <typename T>
T ApplyBinaryFloat(BinaryOp op, T a, T b);
/// max/min propagating NaN (XLA's maximum/minimum); max(-0, +0) = +0, min(-0, +0) = -0.
template <typename T>
T MaxFloat(T a, T b);
template <typename T>
T MinFloat(T a, T b);

inline float ApplyUnaryF(UnaryOp op, float x) { return ApplyUnaryFloat(op, x); }
inline float ApplyBinaryF(BinaryOp op, float a, float b) { return ApplyBinaryFloat(op, a, b); }
bool CompareF(CompareOp op, float a, float b);
inline float MaxF(float a, float b) { return MaxFloat(a, b); }
inline float MinF(float a, float b) { return MinFloat(a, b); }

float ActivateF(Activation act, float x);
int32_t ActivateI(Activation act, int32_t x);

/// Narrowing used by mxu.pop (saturate).
int32_t SaturateToS8(int32_t x);
/// A float value (f64, or f32 and the narrower floats widened exactly) -> integer type t the way
/// vpu.convert does it (XLA's convert): round toward zero, saturate to t's range, NaN -> 0.
int64_t FloatToInt(double x, DType t);
/// Integer value x of type `from` -> float type `to`, rounded once to nearest even (XLA's convert:
/// one rounding, also for bf16/f16, where going through f32 would round twice). The result is
/// returned as an f32 that `to` represents exactly (or inf).
float IntToFloat(int64_t x, DType from, DType to);
/// Integer value x of type `from` -> f64, rounded once to nearest even (exact below 2^53).
double IntToF64(int64_t x, DType from);
/// An f64 value -> float type `to` (f32, bf16, f16 or an f8 type), rounded once to nearest even
/// as XLA's convert does (the narrower types through f32 rounded to odd, so the two steps round
/// once); returned as an f32 that `to` represents exactly (or inf, or NaN).
float NarrowF64(double x, DType to);

}  // namespace tpusim::isa

namespace tpusim::isa {

/// The f8 format of an f8 type (IsFloat8(t); checked).
Float8Format Float8FormatOf(DType t);

/// Element encoding in memory (little-endian). Loads give the VPU's compute value: f32 for
/// bf16/f16/f32/f8 (exact) and f64 (rounded to nearest even), the integer value (see above) for integers and pred (any non-zero byte
/// reads as 1).
float LoadFloat(const void* p, DType t);
int64_t LoadInt(const void* p, DType t);
/// Stores round/narrow to `t`: bf16/f16 RNE, f8 as common/float8.h (RNE, overflow to inf or to
/// NaN in f8e4m3fn), f64 exactly; integers keep their low bits (two's complement
/// truncation); pred stores x != 0.
void StoreFloat(void* p, DType t, float v);
void StoreInt(void* p, DType t, int64_t v);

/// The same for `n` consecutive elements: `out[i]` = LoadFloat(p + i * DTypeBytes(t), t) for
/// i < n (and LoadInt, StoreFloat, StoreInt alike), with the element type's case chosen once per
/// call instead of once per element (the functional simulation's VPU loops).
void LoadFloats(const char* p, DType t, uint64_t n, float* out);
void LoadInts(const char* p, DType t, uint64_t n, int64_t* out);
void StoreFloats(char* p, DType t, uint64_t n, const float* in);
void StoreInts(char* p, DType t, uint64_t n, const int64_t* in);

}  // namespace tpusim::isa
