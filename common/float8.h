// The 8-bit floating-point formats of XLA (ml_dtypes' float8_* types): bit-exact conversion to and
// from wider floats through ONE generic minifloat codec parameterised by the format's layout
// (Float8Spec), shared by the CPU evaluator (hlo/eval/float8.h) and the device's load/store
// (isa/numerics.h).
//
//   XLA name        bits (s/e/m) bias  infinity  NaN encoding            largest finite
//   f8e4m3fn        1/4/3        7     none      S.1111.111              448
//   f8e5m2          1/5/2        15    +-inf     exponent 31, m != 0     57344
//   f8e4m3          1/4/3        7     +-inf     exponent 15, m != 0     240
//   f8e3m4          1/3/4        3     +-inf     exponent 7, m != 0      15.5
//   f8e4m3fnuz      1/4/3        8     none      0x80 (the "-0")         240
//   f8e5m2fnuz      1/5/2        16    none      0x80                    57344
//   f8e4m3b11fnuz   1/4/3        11    none      0x80                    30
//   f8e8m0fnu       0/8/0        127   none      0xFF; no zero           2^127
//
//  * Narrowing (Float8FromDouble): one rounding to nearest, ties to even (f8e8m0fnu: ties away
//    from zero), subnormals kept, as XLA's convert computes (XLA:CPU through jax.jit, jaxlib
//    0.10.2, agrees with every line of the table below, and so does ml_dtypes' non-saturating
//    ConvertImpl for f32 inputs): a magnitude that rounds beyond the largest finite value
//    becomes +-inf where the format has infinities and NaN where it has not (so does +-inf); NaN
//    stays NaN (IEEE-style formats: the quiet NaN, exponent all ones and the top mantissa bit, the
//    sign kept; S.1111.111 for f8e4m3fn; 0x80 for the fnuz formats; 0xFF for f8e8m0fnu). The fnuz
//    formats have one zero: -0 becomes +0. f8e8m0fnu has no sign and no zero: zero, negative
//    values, infinities and NaN become NaN, positive values up to 2^-127 become 2^-127 and those
//    between 2^-127 and 2^-126 become 2^-126 (as XLA and ml_dtypes treat an f32 subnormal input).
//    From f64 the rounding is one too, as XLA:CPU's convert f64 -> f8 does for every format
//    (ml_dtypes, and so XLA's HloEvaluator, round an f64 through f32 first: twice, e.g.
//    2.9999999999999996 -> f8e8m0fnu is 2 in XLA:CPU, 4 in ml_dtypes). One exception, not
//    followed: XLA:CPU turns an f64 below 2^-127 into f8e8m0fnu NaN; here it is 2^-127 as from f32.
//  * Widening (Float8ToFloat) is exact: every value of every format is an f32 value.
//  Verified against ml_dtypes 0.6.0 for every bit pattern and for the round-trip, tie and overflow
//  inputs of tests/data/float8/minifloat_table.txt (tests/common/float8_test.cc); the table
//  against XLA:CPU's convert by tests/data/float8/check_table_with_xla.py (10404 of 10404 lines).
#pragma once

#include <cstdint>

namespace tpusim {

enum class Float8Format {
  kE4M3FN,
  kE5M2,
  kE4M3,
  kE3M4,
  kE4M3FNUZ,
  kE5M2FNUZ,
  kE4M3B11FNUZ,
  kE8M0FNU,
};

/// Where a format keeps its NaN.
enum class Float8Nan {
  kIeee,          // exponent all ones with a non-zero mantissa (all ones with zero mantissa: inf)
  kAllOnes,       // S.1..1.1..1 only (f8e4m3fn)
  kNegativeZero,  // 0x80 only, the bit pattern of -0 (the fnuz formats)
  kAllOnesByte,   // 0xFF only (f8e8m0fnu)
};

/// The layout of one 8-bit float format: sign_bits + exponent_bits + mantissa_bits == 8.
struct Float8Spec {
  int sign_bits;      // 1, or 0 for f8e8m0fnu
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_inf;       // IEEE-style +-inf at exponent all ones, mantissa 0
  Float8Nan nan;
  bool has_subnormals;  // exponent field 0 is subnormal (false: it is 2^-bias, f8e8m0fnu)
  bool ties_away;       // narrowing rounds ties away from zero (f8e8m0fnu) instead of to even
};

/// The layout of `format` (the table in the file comment).
Float8Spec SpecOf(Float8Format format);
/// XLA's name of `format` ("f8e4m3fn", ...).
const char* Float8Name(Float8Format format);
/// The largest finite value of `format` (448 for f8e4m3fn).
double Float8MaxFinite(Float8Format format);
/// Half the unit in the last place of the largest finite value: a number written in HLO text at or
/// past Float8MaxFinite + this is out of the type's range (hlo/parser_literal.cc).
double Float8HalfUlpOfMax(Float8Format format);
/// The f8 bits nearest to `x` (see the file comment for rounding, overflow and NaN).
uint8_t Float8FromDouble(Float8Format format, double x);
/// The value of f8 bits `bits`, exactly (every f8 value is an f32 value).
float Float8ToFloat(Float8Format format, uint8_t bits);

}  // namespace tpusim
