// The 8-bit floating-point formats XLA names f8e4m3fn and f8e5m2 (ml_dtypes' float8_e4m3fn and
// float8_e5m2, the OCP FP8 formats): bit-exact conversion to and from wider floats, shared by the
// CPU evaluator (hlo/eval/float8.h) and the device's load/store (isa/numerics.h).
//
//  * f8e5m2: 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-style (subnormals, +-inf,
//    NaN with exponent 31). Largest finite 57344.
//  * f8e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinity ("fn": finite and NaN),
//    only S.1111.111 is NaN, so exponent 15 holds finite values up to 448.
//  * Narrowing (Float8FromDouble): one rounding to nearest, ties to even, subnormals kept, as
//    ml_dtypes' non-saturating ConvertImpl (what XLA's convert computes): a magnitude that rounds
//    beyond the largest finite value becomes +-inf in f8e5m2 and NaN in f8e4m3fn (which has no
//    infinity; so does +-inf); NaN stays NaN (f8e5m2: quiet NaN 0x7E; f8e4m3fn: 0x7F), the sign
//    kept. Widening (Float8ToFloat) is exact.
#pragma once

#include <cstdint>

namespace tpusim {

enum class Float8Format { kE4M3FN, kE5M2 };

/// The f8 bits nearest to `x` (see the file comment for rounding, overflow and NaN).
uint8_t Float8FromDouble(Float8Format format, double x);
/// The value of f8 bits `bits`, exactly (every f8 value is an f32 value).
float Float8ToFloat(Float8Format format, uint8_t bits);

}  // namespace tpusim
