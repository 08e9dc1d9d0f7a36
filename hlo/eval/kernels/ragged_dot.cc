#include "hlo/eval/kernels/ragged_dot.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "hlo/eval/kernels/data_movement.h"
#include "hlo/eval/kernels/dot.h"

namespace tpusim::hlo {

StatusOr<Literal> RaggedDot(const Literal& lhs, const Literal& rhs, const Literal& group_sizes,
                            const DotDimensionNumbers& dnums, const RaggedDotDims& dims,
                            int64_t ragged_out, const Shape& out, const KernelOptions& options,
                            bool round_operands_to_bf16) {
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const std::vector<int64_t>& rd = rhs.shape().dimensions();
  const int64_t groups = rd[static_cast<size_t>(dims.rhs_group)];
  std::vector<int64_t> one_dims = rd;  // rhs[g] without its group dimension
  one_dims.erase(one_dims.begin() + dims.rhs_group);
  DotDimensionNumbers one = dnums;
  for (int64_t& d : one.rhs_contracting_dimensions) d -= d > dims.rhs_group ? 1 : 0;
  const std::vector<int64_t>& od = out.dimensions();
  const int64_t rows = od[static_cast<size_t>(ragged_out)];
  int64_t inner = 1;  // elements per step along the ragged output dimension
  for (size_t i = static_cast<size_t>(ragged_out) + 1; i < od.size(); ++i) inner *= od[i];
  const int64_t count = result.element_count();
  const size_t bytes = count > 0 ? static_cast<size_t>(result.size_bytes() / count) : 0;
  int64_t start = 0;
  for (int64_t g = 0; g < groups && start < rows; ++g) {
    const int64_t size = std::clamp<int64_t>(group_sizes.GetAsInt64(g), 0, rows - start);
    const int64_t end = start + size;
    if (size > 0) {
      std::vector<int64_t> lo(rd.size(), 0), hi = rd, stride(rd.size(), 1);
      lo[static_cast<size_t>(dims.rhs_group)] = g;
      hi[static_cast<size_t>(dims.rhs_group)] = g + 1;
      std::vector<int64_t> sliced_dims = rd;
      sliced_dims[static_cast<size_t>(dims.rhs_group)] = 1;
      TPUSIM_ASSIGN_OR_RETURN(
          Literal slice,
          Slice(rhs, lo, hi, stride, Shape(rhs.element_type(), sliced_dims), options));
      TPUSIM_ASSIGN_OR_RETURN(Literal w, Reshape(slice, Shape(rhs.element_type(), one_dims)));
      TPUSIM_ASSIGN_OR_RETURN(
          Literal full, DotGeneral(lhs, w, one, out, options, round_operands_to_bf16));
      for (int64_t i = 0; i < count; ++i) {
        const int64_t row = (i / inner) % rows;
        if (row < start || row >= end) continue;
        std::memcpy(result.mutable_raw() + static_cast<size_t>(i) * bytes,
                    full.raw() + static_cast<size_t>(i) * bytes, bytes);
      }
    }
    start = end;
  }
  return result;
}

}  // namespace tpusim::hlo
