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
//    s8/u8/s16/u16/s32/pred compute in s32 with two's complement wrap-around (a narrow integer is
//    widened exactly on load and wrapped to its width on store, so add/sub/mul/div/rem/compare/
//    max/min give the type's own results).
//  * Transcendentals are glibc's single-precision functions (expf, logf, tanhf, ...); logistic(x) =
//    1 / (1 + expf(-x)); rsqrt(x) = 1 / sqrtf(x) (two roundings).
#pragma once

#include <cstdint>

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
/// unary float ops need bf16/f32; neg/abs/sign work on s8/s32 too; not works on s8/s32/pred.
bool UnarySupports(UnaryOp op, DType t);
bool BinarySupports(BinaryOp op, DType t);
bool CompareSupports(CompareOp op, DType t);

float ApplyUnaryF(UnaryOp op, float x);
/// Integer/pred unary on the s32 compute value (pred: 0/1).
int32_t ApplyUnaryI(UnaryOp op, int32_t x, DType t);
float ApplyBinaryF(BinaryOp op, float a, float b);
/// Integer binary: add/sub/mul wrap; div truncates toward zero with x/0 = -1 and INT_MIN/-1 =
/// INT_MIN (XLA's semantics); rem = x - trunc(x/y)*y with x%0 = x; max/min/and/or/xor bitwise as
/// usual; pow with a negative exponent = 0 except base 1 / -1.
int32_t ApplyBinaryI(BinaryOp op, int32_t a, int32_t b);
bool CompareF(CompareOp op, float a, float b);
bool CompareI(CompareOp op, int32_t a, int32_t b);

/// max/min propagating NaN (XLA's maximum/minimum).
float MaxF(float a, float b);
float MinF(float a, float b);

float ActivateF(Activation act, float x);
int32_t ActivateI(Activation act, int32_t x);

/// f32 -> int32 the way vpu.convert does it: round toward zero, saturate, NaN -> 0.
int32_t F32ToS32Saturating(float x);
/// Narrowing used by vpu.convert (wrap) and by mxu.pop (saturate).
int32_t WrapToS8(int32_t x);
int32_t SaturateToS8(int32_t x);
/// x clamped to the range of integer type t (s8 [-128, 127], u8 [0, 255], s16, u16; s32 and pred
/// unchanged): how a float -> narrow-integer conversion saturates (XLA's convert semantics).
int32_t SaturateToInt(int32_t x, DType t);
/// The 32-bit shift operand of a narrow integer of type t for shift op `op`: for shrl its bits
/// zero-extended from t's width, for shra sign-extended (so a u16 0x8000 shra 1 is 0xC000 and an
/// s16 -1 shrl 1 is 0x7FFF once stored back, as XLA defines shifts on the type's own width);
/// anything else unchanged.
int32_t ShiftOperand(BinaryOp op, int32_t x, DType t);

}  // namespace tpusim::isa

namespace tpusim::isa {

/// Element encoding in memory (little-endian). Loads give the VPU's compute value: f32 for
/// bf16/f32, s32 for s8/s32 (sign-extended) and pred (any non-zero byte reads as 1).
float LoadFloat(const void* p, DType t);
int32_t LoadInt(const void* p, DType t);
/// Stores round/narrow to `t`: bf16 RNE; s8 wraps (two's complement truncation); pred stores x !=
/// 0.
void StoreFloat(void* p, DType t, float v);
void StoreInt(void* p, DType t, int32_t v);

}  // namespace tpusim::isa
