// Leading-dimension blocking of row-major boxes for VMEM-sized kernels (internal to
// compiler/lower).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "config/chip_config.h"

namespace tpusim::compiler {

/// ceil(a / b) for a >= 0 and b > 0, without overflow near INT64_MAX (the lowering's one integer
/// ceiling division; common/units.h CeilDiv is the unsigned one).
inline int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

/// The accumulator rows per MXU a kernel may plan with: core.mxu.accumulator_rows, or 2^20 when it
/// is 0 (an unlimited accumulator memory, which the simulator grows as it is used).
inline int64_t PlannedAccumulatorRows(const config::MxuConfig& mxu) {
  return mxu.accumulator_rows > 0 ? mxu.accumulator_rows : (int64_t{1} << 20);
}

// Leading-dimension blocking of a row-major box `dims` for `budget` bytes of elements `e`: the
// outer dims [0, d) are iterated one index at a time, dim d in blocks of `blk`, dims after d whole.
struct Blocking {
  size_t d = 0;
  int64_t blk = 1;
  int64_t inner = 1;  // elements per index of dim d
};

inline std::optional<Blocking> ChooseBlocking(const std::vector<int64_t>& dims, int64_t e,
                                              int64_t budget) {
  const size_t r = dims.size();
  for (size_t d = 0; d < r; ++d) {
    int64_t inner = 1;
    for (size_t j = d + 1; j < r; ++j) inner *= dims[j];
    if (inner * e <= budget) {
      return Blocking{d, std::max<int64_t>(1, std::min(dims[d], budget / (inner * e))), inner};
    }
  }
  return std::nullopt;
}

// Calls f(offsets (element index per dim of the box start), block dims) for every block.
template <typename F>
Status ForEachBlock(const std::vector<int64_t>& dims, const Blocking& b, F&& f) {
  std::vector<int64_t> idx(b.d, 0);
  while (true) {
    for (int64_t s = 0; s < dims[b.d]; s += b.blk) {
      std::vector<int64_t> start(idx);
      start.push_back(s);
      std::vector<int64_t> bdims{std::min(b.blk, dims[b.d] - s)};
      for (size_t j = b.d + 1; j < dims.size(); ++j) {
        start.push_back(0);
        bdims.push_back(dims[j]);
      }
      TPUSIM_RETURN_IF_ERROR(f(start, bdims));
    }
    size_t k = b.d;
    while (k > 0) {
      --k;
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
      if (k == 0) return OkStatus();
    }
    if (b.d == 0) return OkStatus();
  }
}

}  // namespace tpusim::compiler
