// The input band of a convolution kernel (the direct MXU form, lower_convolution.cc, and the VPU
// form, lower_vpu_convolution.cc): the padded, base-dilated input rows and columns a block of
// output rows reads, DMA'd into VMEM with its halo.
#pragma once

#include <algorithm>
#include <cstdint>

#include "hlo/attributes.h"

namespace tpusim::compiler {

/// Positions of the padded, dilated input that `outputs` consecutive outputs read along one
/// dimension with `taps` window positions: (outputs - 1) * stride + (taps - 1) * dilation + 1.
inline int64_t BandExtent(int64_t outputs, int64_t stride, int64_t taps, int64_t dilation) {
  return (outputs - 1) * stride + (taps - 1) * dilation + 1;
}

/// The input positions [lo, hi] of `size` that land in a band starting at padded, base-dilated
/// position `first` with `extent` positions along a dimension with window attributes `w`, and
/// whether the band also holds padding or base-dilation holes (zeros the kernel fills).
struct BandSpan {
  int64_t lo = 0, hi = -1;
  bool holes = false;
};
inline BandSpan InputSpan(int64_t first, int64_t extent, int64_t size,
                          const hlo::WindowDimension& w) {
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  BandSpan s;
  const int64_t b = w.base_dilation;
  const int64_t a = first - w.padding_low;  // band position 0 in dilated input coordinates
  s.lo = std::max<int64_t>(0, a <= 0 ? 0 : ceil_div(a, b));
  s.hi = std::min(size - 1, (a + extent - 1) < 0 ? -1 : (a + extent - 1) / b);
  s.holes = b > 1 || s.hi < s.lo || s.lo * b != a || s.hi * b != a + extent - 1;
  return s;
}

}  // namespace tpusim::compiler
