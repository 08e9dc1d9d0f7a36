#include "hlo/convolution_form.h"

#include <algorithm>

namespace tpusim::hlo {

namespace {

// A convolution's sizes in normalized 2-D terms (a 1-D one has H = KH = OH = 1); nullopt unless it
// has no batch groups, `groups` feature groups (feature_group_count must equal it), one or two
// spatial dimensions, ranks that agree, a window without negative padding, kernel input features
// equal to the input's divided by the groups, and output features a multiple of the groups.
// `feature` is the input's features (all groups), `out_feature` the kernel's output features.
struct ConvSizes : ConvGeometry {
  int64_t batch = 1, feature = 1, out_feature = 1;
};

std::optional<ConvSizes> Normalize(const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
                                   const std::vector<int64_t>& out, const Window& window,
                                   const ConvolutionDimensionNumbers& dnums,
                                   int64_t feature_group_count, int64_t batch_group_count,
                                   int64_t mxu_rows, int64_t groups = 1) {
  const size_t s = dnums.input_spatial_dimensions.size();
  if (feature_group_count != groups || groups < 1 || batch_group_count != 1 || s < 1 || s > 2 ||
      mxu_rows < 1 ||
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
  ConvSizes c;
  c.batch = at(lhs, dnums.input_batch_dimension);
  c.feature = at(lhs, dnums.input_feature_dimension);
  c.out_feature = at(rhs, dnums.kernel_output_feature_dimension);
  if (c.feature % groups != 0 || c.out_feature % groups != 0 ||
      at(rhs, dnums.kernel_input_feature_dimension) != c.feature / groups) {
    return std::nullopt;
  }
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
  if (c.batch < 1 || c.feature < 1 || c.out_feature < 1) return std::nullopt;
  return c;
}

// Feature groups of `cg` input features each run as direct convolutions on the MXUs when a group's
// features fill at least 1/kMxuGroupFraction of the array's rows; fewer (a depthwise convolution's
// one) run on the VPU (VpuConvolution).
constexpr int64_t kMxuGroupFraction = 8;
bool GroupsOnMxu(int64_t cg, int64_t mxu_rows) { return cg * kMxuGroupFraction >= mxu_rows; }

// Elements between consecutive images, features, input rows and input columns of the input as
// stored (row-major in the order of `lhs`'s dimensions); a 1-D convolution (one spatial
// dimension, H = 1) has one row of `W` columns.
struct InputStrides {
  int64_t batch = 1, feature = 1, row = 1, column = 1;
};
InputStrides StridesOfInput(const std::vector<int64_t>& lhs,
                            const ConvolutionDimensionNumbers& dnums, int64_t W) {
  std::vector<int64_t> stride(lhs.size(), 1);
  for (size_t d = lhs.size() - 1; d-- > 0;) stride[d] = stride[d + 1] * lhs[d + 1];
  const auto st = [&](int64_t d) { return stride[static_cast<size_t>(d)]; };
  const auto& sp = dnums.input_spatial_dimensions;
  InputStrides s;
  s.batch = st(dnums.input_batch_dimension);
  s.feature = st(dnums.input_feature_dimension);
  s.column = st(sp.back());
  s.row = sp.size() == 2 ? st(sp[0]) : s.column * W;
  return s;
}

}  // namespace

bool KernelFoldsWindowColumnsIntoN(const std::vector<int64_t>& kernel_minor_to_major,
                                   const ConvolutionDimensionNumbers& dnums) {
  const auto& sp = dnums.kernel_spatial_dimensions;
  return kernel_minor_to_major.size() >= 2 && !sp.empty() &&
         kernel_minor_to_major[0] == dnums.kernel_output_feature_dimension &&
         kernel_minor_to_major[1] == sp.back();
}

std::optional<DirectConvolution> PlanDirectConvolution(
    const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
    const std::vector<int64_t>& out, const Window& window, const ConvolutionDimensionNumbers& dnums,
    int64_t feature_group_count, int64_t batch_group_count, int64_t mxu_rows,
    bool columns_in_n) {
  const int64_t groups = std::max<int64_t>(1, feature_group_count);
  if (groups > 1 &&
      (mxu_rows < 1 || lhs.size() <= static_cast<size_t>(dnums.input_feature_dimension) ||
       !GroupsOnMxu(lhs[static_cast<size_t>(dnums.input_feature_dimension)] / groups, mxu_rows))) {
    return std::nullopt;
  }
  const auto n = Normalize(lhs, rhs, out, window, dnums, feature_group_count, batch_group_count,
                           mxu_rows, groups);
  if (!n) return std::nullopt;
  DirectConvolution c;
  static_cast<ConvGeometry&>(c) = *n;
  c.N = n->batch;
  c.groups = groups;
  c.C = n->feature / groups;
  c.O = n->out_feature / groups;
  if (c.KH * c.KW > c.OH * c.OW) return std::nullopt;
  const InputStrides in = StridesOfInput(lhs, dnums, c.W);
  c.sN = in.batch;
  c.sH = in.row;
  c.sW = in.column;
  // K tiles: fold consecutive taps of a window row when a tap's features fill at most half the
  // array's rows and the taps are adjacent in the input (no dilation along W). A reversed window
  // folds too: the taps are counted in input-offset order, and their weights (the kernel's
  // columns in reverse) are laid out in that order before they are loaded.
  c.columns_in_n = columns_in_n && groups == 1 && c.C * 2 <= mxu_rows && c.KW > 1 &&
                   c.ww.window_dilation == 1 && c.ww.base_dilation == 1 &&
                   !c.ww.window_reversal && !c.wh.window_reversal;
  if (c.columns_in_n) {
    for (int64_t kh = 0; kh < c.KH; ++kh) c.k_tiles.push_back(ConvKTile{kh, 0, 1, 0, c.C});
    return c;
  }
  const bool fold = c.C * 2 <= mxu_rows && c.ww.window_dilation == 1;
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

std::optional<VpuConvolution> PlanVpuConvolution(const std::vector<int64_t>& lhs,
                                                 const std::vector<int64_t>& rhs,
                                                 const std::vector<int64_t>& out,
                                                 const Window& window,
                                                 const ConvolutionDimensionNumbers& dnums,
                                                 int64_t feature_group_count,
                                                 int64_t batch_group_count, int64_t mxu_rows) {
  const int64_t groups = feature_group_count;
  if (groups < 2 || mxu_rows < 1 ||
      lhs.size() <= static_cast<size_t>(dnums.input_feature_dimension) ||
      GroupsOnMxu(lhs[static_cast<size_t>(dnums.input_feature_dimension)] / groups, mxu_rows)) {
    return std::nullopt;
  }
  const auto n = Normalize(lhs, rhs, out, window, dnums, feature_group_count, batch_group_count,
                           mxu_rows, groups);
  if (!n || n->wh.window_reversal || n->ww.window_reversal) return std::nullopt;
  VpuConvolution c;
  static_cast<ConvGeometry&>(c) = *n;
  c.N = n->batch;
  c.G = groups;
  c.cg = n->feature / groups;
  c.og = n->out_feature / groups;
  const InputStrides in = StridesOfInput(lhs, dnums, c.W);
  c.sN = in.batch;
  c.sH = in.row;
  c.sW = in.column;
  return c;
}

bool FilterGradientFeatureTiles(int64_t F, int64_t KH, int64_t KW, bool cross_rows,
                                int64_t mxu_rows) {
  if (mxu_rows < 1 || F < 1 || KH < 1 || KW < 1) return false;
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // Rows filled per tile issued, as fractions compared exactly: F / (ceil(F/R) R) against
  // positions / (tiles R), i.e. F * tiles > positions * ceil(F/R).
  const int64_t positions = KH * KW;
  const int64_t position_tiles =
      cross_rows ? ceil_div(positions, mxu_rows) : KH * ceil_div(KW, mxu_rows);
  return F * position_tiles > positions * ceil_div(F, mxu_rows);
}

bool FilterGradInputIsSpatialBatchImage(const ConvolutionDimensionNumbers& dnums) {
  const auto k = static_cast<int64_t>(dnums.input_spatial_dimensions.size());
  for (int64_t i = 0; i < k; ++i) {
    if (dnums.input_spatial_dimensions[static_cast<size_t>(i)] != i) return false;
  }
  return dnums.input_batch_dimension == k && dnums.input_feature_dimension == k + 1;
}

std::optional<FilterGradientConvolution> PlanFilterGradientConvolution(
    const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
    const std::vector<int64_t>& out, const Window& window, const ConvolutionDimensionNumbers& dnums,
    int64_t feature_group_count, int64_t batch_group_count, int64_t mxu_rows) {
  const auto n =
      Normalize(lhs, rhs, out, window, dnums, feature_group_count, batch_group_count, mxu_rows);
  if (!n) return std::nullopt;
  FilterGradientConvolution c;
  static_cast<ConvGeometry&>(c) = *n;
  c.B = n->batch;
  c.F = n->feature;
  c.O = n->out_feature;
  if (c.KH * c.KW <= c.OH * c.OW) return std::nullopt;
  const InputStrides in = StridesOfInput(lhs, dnums, c.W);
  c.sF = in.feature;
  c.sB = in.batch;
  c.sH = in.row;
  c.sW = in.column;
  if (c.wh.base_dilation != 1 || c.ww.base_dilation != 1 || c.ww.window_reversal ||
      c.wh.window_reversal) {
    return std::nullopt;
  }
  const int64_t positions = c.KH * c.KW;
  const bool cross_rows = c.wh.window_dilation == 1;
  c.feature_tiles = FilterGradientFeatureTiles(c.F, c.KH, c.KW, cross_rows, mxu_rows);
  if (c.feature_tiles) {
    for (int64_t f0 = 0; f0 < c.F; f0 += mxu_rows) {
      for (int64_t k = 0; k < positions; ++k) {
        c.k_tiles.push_back({f0, k, std::min(mxu_rows, c.F - f0)});
      }
    }
    return c;
  }
  for (int64_t f = 0; f < c.F; ++f) {
    for (int64_t k0 = 0; k0 < positions;) {
      int64_t count = std::min(mxu_rows, positions - k0);
      if (!cross_rows) count = std::min(count, c.KW - k0 % c.KW);
      c.k_tiles.push_back({f, k0, count});
      k0 += count;
    }
  }
  return c;
}

std::optional<SlicedConvolutionInput> SliceNegativePadding(
    const std::vector<int64_t>& lhs, const Window& window,
    const ConvolutionDimensionNumbers& dnums) {
  if (window.dimensions.size() != dnums.input_spatial_dimensions.size()) return std::nullopt;
  SlicedConvolutionInput s{lhs, std::vector<int64_t>(lhs.size(), 0), lhs, window};
  bool negative = false;
  for (size_t i = 0; i < s.window.dimensions.size(); ++i) {
    WindowDimension& w = s.window.dimensions[i];
    if (w.padding_low >= 0 && w.padding_high >= 0) continue;
    const int64_t d = dnums.input_spatial_dimensions[i];
    if (w.base_dilation != 1 || d < 0 || d >= static_cast<int64_t>(lhs.size())) return std::nullopt;
    const auto di = static_cast<size_t>(d);
    s.start[di] = -std::min<int64_t>(w.padding_low, 0);
    s.limit[di] = lhs[di] + std::min<int64_t>(w.padding_high, 0);
    if (s.limit[di] <= s.start[di]) return std::nullopt;
    s.lhs[di] = s.limit[di] - s.start[di];
    w.padding_low = std::max<int64_t>(w.padding_low, 0);
    w.padding_high = std::max<int64_t>(w.padding_high, 0);
    negative = true;
  }
  if (!negative) return std::nullopt;
  return s;
}

ConvSummationOrder ConvolutionSummationOrder(const std::vector<int64_t>& lhs,
                                             const std::vector<int64_t>& rhs,
                                             const std::vector<int64_t>& out, const Window& window,
                                             const ConvolutionDimensionNumbers& dnums,
                                             int64_t feature_group_count, int64_t batch_group_count,
                                             int64_t mxu_rows, bool columns_in_n) {
  if (const auto sliced = SliceNegativePadding(lhs, window, dnums)) {
    return ConvolutionSummationOrder(sliced->lhs, rhs, out, sliced->window, dnums,
                                     feature_group_count, batch_group_count, mxu_rows,
                                     columns_in_n);
  }
  ConvSummationOrder so;
  if (const auto d = PlanDirectConvolution(lhs, rhs, out, window, dnums, feature_group_count,
                                           batch_group_count, mxu_rows, columns_in_n)) {
    if (d->columns_in_n) {
      // Column kw's partial sum: its taps (kh, kw) in kh order, one K tile each, all features.
      for (int64_t kw = 0; kw < d->KW; ++kw) {
        for (int64_t kh = 0; kh < d->KH; ++kh) {
          for (int64_t f = 0; f < d->C; ++f) so.order.push_back((kh * d->KW + kw) * d->C + f);
          so.tile_ends.push_back(static_cast<int64_t>(so.order.size()));
        }
        so.partial_ends.push_back(static_cast<int64_t>(so.tile_ends.size()));
      }
      return so;
    }
    int64_t end = 0;
    for (const ConvKTile& t : d->k_tiles) so.tile_ends.push_back(end += t.k());
    return so;
  }
  // Any other form takes the kernel reversed beforehand (as the evaluator does) and the window
  // unreversed (compiler/passes/convolution_lowering.h).
  Window unreversed = window;
  for (WindowDimension& w : unreversed.dimensions) w.window_reversal = false;
  if (const auto g = PlanFilterGradientConvolution(lhs, rhs, out, unreversed, dnums,
                                                   feature_group_count, batch_group_count,
                                                   mxu_rows)) {
    // im2col index of (window position (kh, kw), feature f) = (kh * KW + kw) * F + f.
    for (const auto& t : g->k_tiles) {
      for (int64_t j = 0; j < t.count; ++j) {
        so.order.push_back(g->feature_tiles ? t.k0 * g->F + t.f + j : (t.k0 + j) * g->F + t.f);
      }
      so.tile_ends.push_back(static_cast<int64_t>(so.order.size()));
    }
    return so;
  }
  int64_t ki = 1;
  for (int64_t d : dnums.kernel_spatial_dimensions) ki *= rhs[static_cast<size_t>(d)];
  ki *= rhs[static_cast<size_t>(dnums.kernel_input_feature_dimension)];
  if (PlanVpuConvolution(lhs, rhs, out, unreversed, dnums, feature_group_count, batch_group_count,
                         mxu_rows)) {
    so.tile_ends.push_back(ki);  // the VPU adds product after product, in im2col order
    return so;
  }
  for (int64_t t0 = 0; t0 < ki; t0 += mxu_rows) so.tile_ends.push_back(std::min(ki, t0 + mxu_rows));
  return so;
}

}  // namespace tpusim::hlo
