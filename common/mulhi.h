// The high half of an integer product: XLA's `mulhi` (xla/hlo/ir/hlo_opcode.h), for the evaluator
// (hlo/eval/kernels/elementwise_ops.h) and the VPU's vpu.binary mulhi (isa/numerics_int.cc), so
// both compute the same bits.
#pragma once

#include <cstdint>

namespace tpusim {

/// The high 64 bits of the 128-bit product a * b of unsigned 64-bit values (four 32x32 partial
/// products; no 128-bit integer type).
inline uint64_t MulHiU64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
  const uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo;
  const uint64_t hi_lo = a_hi * b_lo;
  const uint64_t lo_hi = a_lo * b_hi;
  const uint64_t hi_hi = a_hi * b_hi;
  const uint64_t mid = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + (lo_hi & 0xFFFFFFFFu);
  return hi_hi + (hi_lo >> 32) + (lo_hi >> 32) + (mid >> 32);
}

/// The high 64 bits of the 128-bit two's-complement product a * b of signed 64-bit values: the
/// unsigned high half corrected for each negative factor (hi_s = hi_u - (a < 0 ? b : 0) -
/// (b < 0 ? a : 0), modulo 2^64).
inline int64_t MulHiS64(int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  uint64_t hi = MulHiU64(ua, ub);
  if (a < 0) hi -= ub;
  if (b < 0) hi -= ua;
  return static_cast<int64_t>(hi);
}

/// The high `bits` bits of the 2*bits-bit product of a and b, for an integer type of `bits` bits
/// (8, 16, 32 or 64), signed or not; a and b hold values of that type, the result is one too.
inline int64_t MulHi(int64_t a, int64_t b, int bits, bool is_unsigned) {
  if (bits == 64) {
    return is_unsigned ? static_cast<int64_t>(
                             MulHiU64(static_cast<uint64_t>(a), static_cast<uint64_t>(b)))
                       : MulHiS64(a, b);
  }
  if (is_unsigned) {  // both below 2^32: the product fits in 64 bits
    return static_cast<int64_t>((static_cast<uint64_t>(a) * static_cast<uint64_t>(b)) >> bits);
  }
  return (a * b) >> bits;  // |a*b| <= 2^62; arithmetic shift (C++20)
}

}  // namespace tpusim
