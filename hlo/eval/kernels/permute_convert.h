// An operand transposed to a given dimension order and converted to an accumulation type (float,
// double or wrapping uint64), as dot and convolution feed their GEMMs.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "hlo/eval/convert.h"
#include "hlo/eval/kernels/data_movement.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// Row-major values of transpose(in, perm) as Acc. Floats -> float/double exactly (f64 -> f32
/// rounds); integers -> uint64 two's complement (wrapping arithmetic). round_f32_to_bf16: f32
/// inputs are rounded to bf16 first (TPU DEFAULT-precision MXU pass).
template <typename Acc>
StatusOr<std::vector<Acc>> PermuteToAcc(const Literal& in, const std::vector<int64_t>& perm,
                                        bool round_f32_to_bf16, const KernelOptions& options) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(in.shape().dimensions(p));
  TPUSIM_ASSIGN_OR_RETURN(Literal t, Transpose(in, perm, Shape(in.element_type(), dims), options));
  std::vector<Acc> out(static_cast<size_t>(t.element_count()));
  PrimitiveTypeSwitch(t.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<Acc, uint64_t>) {
        if constexpr (kIsFloat<T>) {
          out[i] = static_cast<uint64_t>(SaturatingFloatToInt<int64_t>(ToDouble(src[i])));
        } else {
          out[i] = static_cast<uint64_t>(static_cast<int64_t>(src[i]));
        }
      } else {
        out[i] = static_cast<Acc>(ToDouble(src[i]));
        if constexpr (std::is_same_v<Acc, float> && std::is_same_v<T, float>) {
          if (round_f32_to_bf16) out[i] = static_cast<float>(Eigen::bfloat16(out[i]));
        }
      }
    }
  });
  return out;
}

}  // namespace tpusim::hlo
