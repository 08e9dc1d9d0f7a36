#include "compiler/hlo/convolution_form.h"

#include <algorithm>

namespace tpusim::hlo {

std::optional<DirectConvolution> PlanDirectConvolution(
    const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
    const std::vector<int64_t>& out, const Window& window, const ConvolutionDimensionNumbers& dnums,
    int64_t feature_group_count, int64_t batch_group_count, int64_t mxu_rows) {
  const size_t s = dnums.input_spatial_dimensions.size();
  if (feature_group_count != 1 || batch_group_count != 1 || s < 1 || s > 2 || mxu_rows < 1 ||
      window.dimensions.size() != s || dnums.kernel_spatial_dimensions.size() != s ||
      dnums.output_spatial_dimensions.size() != s || lhs.size() != s + 2 || rhs.size() != s + 2 ||
      out.size() != s + 2) {
    return std::nullopt;
  }
  for (const WindowDimension& w : window.dimensions) {
    if (w.padding_low < 0 || w.padding_high < 0 || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1 || w.size < 1) {
      return std::nullopt;
    }
  }
  const auto at = [](const std::vector<int64_t>& v, int64_t d) {
    return v[static_cast<size_t>(d)];
  };
  DirectConvolution c;
  c.N = at(lhs, dnums.input_batch_dimension);
  c.C = at(lhs, dnums.input_feature_dimension);
  c.O = at(rhs, dnums.kernel_output_feature_dimension);
  if (at(rhs, dnums.kernel_input_feature_dimension) != c.C) return std::nullopt;
  // Spatial dimension 0 of a 1-D convolution is W (H = 1).
  const size_t wd = s - 1;
  c.W = at(lhs, dnums.input_spatial_dimensions[wd]);
  c.KW = at(rhs, dnums.kernel_spatial_dimensions[wd]);
  c.OW = at(out, dnums.output_spatial_dimensions[wd]);
  c.ww = window.dimensions[wd];
  if (s == 2) {
    c.H = at(lhs, dnums.input_spatial_dimensions[0]);
    c.KH = at(rhs, dnums.kernel_spatial_dimensions[0]);
    c.OH = at(out, dnums.output_spatial_dimensions[0]);
    c.wh = window.dimensions[0];
  }
  if (c.KH * c.KW > c.OH * c.OW || c.C < 1 || c.O < 1) return std::nullopt;
  // K tiles: fold consecutive taps of a window row when a tap's features fill at most half the
  // array's rows and the taps are adjacent in the input (no dilation or reversal along W).
  const bool fold = c.C * 2 <= mxu_rows && c.ww.window_dilation == 1 && !c.ww.window_reversal;
  const int64_t fold_taps = fold ? std::max<int64_t>(1, mxu_rows / c.C) : 1;
  for (int64_t kh = 0; kh < c.KH; ++kh) {
    for (int64_t kw = 0; kw < c.KW; kw += fold_taps) {
      const int64_t taps = std::min(fold_taps, c.KW - kw);
      for (int64_t c0 = 0; c0 < c.C; c0 += mxu_rows) {
        c.k_tiles.push_back(ConvKTile{kh, kw, taps, c0, std::min(mxu_rows, c.C - c0)});
      }
    }
  }
  return c;
}

}  // namespace tpusim::hlo
