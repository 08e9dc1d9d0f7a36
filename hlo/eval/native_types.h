// The C++ type that holds one element of each HLO element type the CPU evaluator supports, and a
// switch that calls a generic lambda with that type. One place maps PrimitiveType <-> C++ type;
// every kernel dispatches through PrimitiveTypeSwitch.
//
// Supported: pred (stored as bool, one byte as XLA stores it), s8 s16 s32 s64, u8 u16 u32 u64,
// f16 (Eigen::half), bf16 (Eigen::bfloat16), f32, f64, the eight f8 formats (float8.h), s4 and u4
// (int4.h, one element per byte); c64 and c128 (std::complex<float> / <double>, real part first as
// XLA stores them), which Literal holds but PrimitiveTypeSwitch does not dispatch: the complex
// kernels (kernels/complex.h, fft.h) take them, and the evaluator refuses other ops on them by name.
#pragma once

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "common/check.h"
#include "hlo/eval/float8.h"
#include "hlo/eval/int4.h"
#include "hlo/shape.h"

namespace tpusim::hlo {

/// A value-less tag carrying a type, so a generic lambda can receive "the type" as an argument.
template <typename T>
struct TypeTag {
  using type = T;
};

/// True for the element types Literal can store.
inline bool IsEvaluatorType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      return true;
    default:
      return false;
  }
}

/// Calls f(TypeTag<T>{}) with T the native type of `t`. `t` must satisfy IsEvaluatorType and not be
/// complex (checked).
template <typename F>
decltype(auto) PrimitiveTypeSwitch(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kPred:
      return f(TypeTag<bool>{});
    case PrimitiveType::kS8:
      return f(TypeTag<int8_t>{});
    case PrimitiveType::kS16:
      return f(TypeTag<int16_t>{});
    case PrimitiveType::kS32:
      return f(TypeTag<int32_t>{});
    case PrimitiveType::kS64:
      return f(TypeTag<int64_t>{});
    case PrimitiveType::kU8:
      return f(TypeTag<uint8_t>{});
    case PrimitiveType::kU16:
      return f(TypeTag<uint16_t>{});
    case PrimitiveType::kU32:
      return f(TypeTag<uint32_t>{});
    case PrimitiveType::kU64:
      return f(TypeTag<uint64_t>{});
    case PrimitiveType::kF16:
      return f(TypeTag<Eigen::half>{});
    case PrimitiveType::kBF16:
      return f(TypeTag<Eigen::bfloat16>{});
    case PrimitiveType::kF32:
      return f(TypeTag<float>{});
    case PrimitiveType::kF64:
      return f(TypeTag<double>{});
    case PrimitiveType::kF8E4M3FN:
      return f(TypeTag<F8E4M3FN>{});
    case PrimitiveType::kF8E5M2:
      return f(TypeTag<F8E5M2>{});
    case PrimitiveType::kF8E4M3:
      return f(TypeTag<F8E4M3>{});
    case PrimitiveType::kF8E3M4:
      return f(TypeTag<F8E3M4>{});
    case PrimitiveType::kF8E4M3FNUZ:
      return f(TypeTag<F8E4M3FNUZ>{});
    case PrimitiveType::kF8E5M2FNUZ:
      return f(TypeTag<F8E5M2FNUZ>{});
    case PrimitiveType::kF8E4M3B11FNUZ:
      return f(TypeTag<F8E4M3B11FNUZ>{});
    case PrimitiveType::kF8E8M0FNU:
      return f(TypeTag<F8E8M0FNU>{});
    case PrimitiveType::kS4:
      return f(TypeTag<S4>{});
    case PrimitiveType::kU4:
      return f(TypeTag<U4>{});
    default:
      break;
  }
  TPUSIM_CHECK(false) << "PrimitiveTypeSwitch on unsupported type " << PrimitiveTypeName(t);
  return f(TypeTag<float>{});  // unreachable
}

/// The PrimitiveType of a native type.
template <typename T>
constexpr PrimitiveType PrimitiveTypeOf() {
  if constexpr (std::is_same_v<T, bool>) return PrimitiveType::kPred;
  if constexpr (std::is_same_v<T, int8_t>) return PrimitiveType::kS8;
  if constexpr (std::is_same_v<T, int16_t>) return PrimitiveType::kS16;
  if constexpr (std::is_same_v<T, int32_t>) return PrimitiveType::kS32;
  if constexpr (std::is_same_v<T, int64_t>) return PrimitiveType::kS64;
  if constexpr (std::is_same_v<T, uint8_t>) return PrimitiveType::kU8;
  if constexpr (std::is_same_v<T, uint16_t>) return PrimitiveType::kU16;
  if constexpr (std::is_same_v<T, uint32_t>) return PrimitiveType::kU32;
  if constexpr (std::is_same_v<T, uint64_t>) return PrimitiveType::kU64;
  if constexpr (std::is_same_v<T, Eigen::half>) return PrimitiveType::kF16;
  if constexpr (std::is_same_v<T, Eigen::bfloat16>) return PrimitiveType::kBF16;
  if constexpr (std::is_same_v<T, float>) return PrimitiveType::kF32;
  if constexpr (std::is_same_v<T, double>) return PrimitiveType::kF64;
  if constexpr (std::is_same_v<T, F8E4M3FN>) return PrimitiveType::kF8E4M3FN;
  if constexpr (std::is_same_v<T, F8E5M2>) return PrimitiveType::kF8E5M2;
  if constexpr (std::is_same_v<T, F8E4M3>) return PrimitiveType::kF8E4M3;
  if constexpr (std::is_same_v<T, F8E3M4>) return PrimitiveType::kF8E3M4;
  if constexpr (std::is_same_v<T, F8E4M3FNUZ>) return PrimitiveType::kF8E4M3FNUZ;
  if constexpr (std::is_same_v<T, F8E5M2FNUZ>) return PrimitiveType::kF8E5M2FNUZ;
  if constexpr (std::is_same_v<T, F8E4M3B11FNUZ>) return PrimitiveType::kF8E4M3B11FNUZ;
  if constexpr (std::is_same_v<T, F8E8M0FNU>) return PrimitiveType::kF8E8M0FNU;
  if constexpr (std::is_same_v<T, S4>) return PrimitiveType::kS4;
  if constexpr (std::is_same_v<T, U4>) return PrimitiveType::kU4;
  if constexpr (std::is_same_v<T, std::complex<float>>) return PrimitiveType::kC64;
  if constexpr (std::is_same_v<T, std::complex<double>>) return PrimitiveType::kC128;
  return PrimitiveType::kInvalid;
}

/// The f8 types (Float8<F> of every format).
template <typename T>
constexpr bool kIsFloat8 = kIsFloat8Type<T>;
/// f16, bf16, f32, f64, f8.
template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16> ||
                          std::is_same_v<T, float> || std::is_same_v<T, double> || kIsFloat8<T>;
/// f16, bf16 and the f8 types: computed in f32 and rounded back once per HLO op.
template <typename T>
constexpr bool kIsHalfFloat =
    std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16> || kIsFloat8<T>;
/// s4 and u4 (int4.h): stored one per byte, computed widened to 32 bits and wrapped back.
template <typename T>
constexpr bool kIsInt4 = std::is_same_v<T, S4> || std::is_same_v<T, U4>;
/// Integers other than pred (native C++ integers; s4/u4 are kIsInt4).
template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The type arithmetic on T is carried out in: float for f16/bf16/f8, int32 for s4/u4, T otherwise.
template <typename T>
using ComputeType =
    std::conditional_t<kIsHalfFloat<T>, float, std::conditional_t<kIsInt4<T>, int32_t, T>>;

}  // namespace tpusim::hlo
