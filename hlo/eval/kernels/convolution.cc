#include "hlo/eval/kernels/convolution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "hlo/convolution_form.h"
#include "hlo/eval/kernels/data_movement.h"
#include "hlo/eval/kernels/gemm.h"
#include "hlo/eval/kernels/index_util.h"
#include "hlo/eval/kernels/parallel.h"
#include "hlo/eval/kernels/permute_convert.h"

namespace tpusim::hlo {
namespace {

template <typename Acc>
Status RunConvolution(const Literal& lhs, const Literal& rhs, const ConvolutionParams& p,
                      Literal& result, const KernelOptions& options) {
  const ConvolutionDimensionNumbers& dn = p.dnums;
  const Shape& out = result.shape();
  const int64_t S = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  const int64_t N = lhs.shape().dimensions(dn.input_batch_dimension);
  const int64_t C = lhs.shape().dimensions(dn.input_feature_dimension);
  const int64_t I = rhs.shape().dimensions(dn.kernel_input_feature_dimension);
  const int64_t O = rhs.shape().dimensions(dn.kernel_output_feature_dimension);
  const int64_t G = p.feature_group_count, BG = p.batch_group_count;
  const int64_t groups = std::max(G, BG);
  const int64_t Og = O / groups;
  const int64_t Nout = N / BG;

  std::vector<int64_t> in_sp(S), k_sp(S), out_sp(S);
  for (int64_t d = 0; d < S; ++d) {
    in_sp[d] = lhs.shape().dimensions(dn.input_spatial_dimensions[d]);
    k_sp[d] = rhs.shape().dimensions(dn.kernel_spatial_dimensions[d]);
    out_sp[d] = out.dimensions(dn.output_spatial_dimensions[d]);
  }

  // X: [N, in spatial..., C]; W: [window..., I, O] with reversed window dims already flipped.
  std::vector<int64_t> xperm{dn.input_batch_dimension};
  xperm.insert(xperm.end(), dn.input_spatial_dimensions.begin(), dn.input_spatial_dimensions.end());
  xperm.push_back(dn.input_feature_dimension);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Acc> X, PermuteToAcc<Acc>(lhs, xperm, false, options));
  Literal kernel = rhs;
  std::vector<int64_t> reversed;
  for (int64_t d = 0; d < S; ++d) {
    if (p.window.dimensions[static_cast<size_t>(d)].window_reversal) {
      reversed.push_back(dn.kernel_spatial_dimensions[d]);
    }
  }
  if (!reversed.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(kernel, Reverse(rhs, reversed, rhs.shape(), options));
  }
  std::vector<int64_t> wperm(dn.kernel_spatial_dimensions.begin(),
                             dn.kernel_spatial_dimensions.end());
  wperm.push_back(dn.kernel_input_feature_dimension);
  wperm.push_back(dn.kernel_output_feature_dimension);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Acc> W, PermuteToAcc<Acc>(kernel, wperm, false, options));

  // coord[d][y * K_d + k] = input coordinate read by output y at window offset k, or -1 for a hole.
  std::vector<std::vector<int64_t>> coord(S);
  for (int64_t d = 0; d < S; ++d) {
    const WindowDimension& wd = p.window.dimensions[static_cast<size_t>(d)];
    coord[d].resize(static_cast<size_t>(out_sp[d] * k_sp[d]));
    for (int64_t y = 0; y < out_sp[d]; ++y) {
      for (int64_t k = 0; k < k_sp[d]; ++k) {
        int64_t pos = y * wd.stride + k * wd.window_dilation - wd.padding_low;
        int64_t c = -1;
        if (pos >= 0 && pos % wd.base_dilation == 0 && pos / wd.base_dilation < in_sp[d]) {
          c = pos / wd.base_dilation;
        }
        coord[d][static_cast<size_t>(y * k_sp[d] + k)] = c;
      }
    }
  }
  const int64_t window_elems = Product(k_sp);
  const int64_t KI = window_elems * I;
  const int64_t out_positions_per_batch = Product(out_sp);
  const int64_t rows = Nout * out_positions_per_batch;
  const std::vector<int64_t> x_strides = [&] {
    std::vector<int64_t> dims{N};
    dims.insert(dims.end(), in_sp.begin(), in_sp.end());
    dims.push_back(C);
    return RowMajorStrides(dims);
  }();

  // In the MXU's order: the K tiles (and, for a filter gradient, the K order) of the form the
  // compiler computes the convolution in (hlo/convolution_form.h).
  ConvSummationOrder order;
  if (options.mxu_k_tile > 0) {
    order = ConvolutionSummationOrder(lhs.shape().dimensions(), rhs.shape().dimensions(),
                                      out.dimensions(), p.window, dn, G, BG, options.mxu_k_tile,
                                      p.columns_in_n);
  }

  std::vector<Acc> Y(static_cast<size_t>(rows * O), Acc{0});
  const int64_t row_blocks = (rows + kConvRowBlock - 1) / kConvRowBlock;
  ParallelForBlocks(groups * row_blocks, 1, options.threads, [&](int64_t begin, int64_t end) {
    std::vector<Acc> patch;
    std::vector<int64_t> y(S), k(S);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t g = item / row_blocks;
      const int64_t r0 = (item % row_blocks) * kConvRowBlock;
      const int64_t nrows = std::min(kConvRowBlock, rows - r0);
      const int64_t c0 = G > 1 ? g * I : 0;  // first input channel of the group
      patch.assign(static_cast<size_t>(nrows * KI), Acc{0});
      for (int64_t r = 0; r < nrows; ++r) {
        const int64_t row = r0 + r;
        const int64_t n = row / out_positions_per_batch;
        const int64_t n_in = BG > 1 ? g * Nout + n : n;
        DelinearizeIndex(row % out_positions_per_batch, out_sp, y);
        std::fill(k.begin(), k.end(), 0);
        Acc* prow = patch.data() + r * KI;
        for (int64_t w = 0; w < window_elems; ++w) {
          int64_t off = n_in * x_strides[0];
          bool valid = true;
          for (int64_t d = 0; d < S; ++d) {
            int64_t c = coord[d][static_cast<size_t>(y[d] * k_sp[d] + k[d])];
            if (c < 0) {
              valid = false;
              break;
            }
            off += c * x_strides[static_cast<size_t>(d + 1)];
          }
          if (valid)
            std::memcpy(prow + w * I, X.data() + off + c0, static_cast<size_t>(I) * sizeof(Acc));
          NextIndex(k, k_sp);
        }
      }
      if (options.mxu_k_tile > 0) {
        MxuOrderGemmTiles<Acc>(patch.data(), KI, W.data() + g * Og, O, Y.data() + r0 * O + g * Og,
                               O, nrows, Og, order.tile_ends, order.order, order.partial_ends);
      } else {
        GemmTile<Acc>(patch.data(), KI, W.data() + g * Og, O, Y.data() + r0 * O + g * Og, O, nrows,
                      KI, Og, 0);
      }
    }
  });

  // Y is [Nout, out spatial..., O]; write it in the result's dimension order.
  std::vector<int64_t> ydims{Nout};
  ydims.insert(ydims.end(), out_sp.begin(), out_sp.end());
  ydims.push_back(O);
  TPUSIM_ASSIGN_OR_RETURN(Literal ylit,
                          Literal::Create(Shape(out.element_type(), ydims), options.max_bytes));
  PrimitiveTypeSwitch(out.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = ylit.mutable_data<T>();
    for (size_t i = 0; i < Y.size(); ++i) d[i] = ConvertElement<T>(Y[i]);
  });
  std::vector<int64_t> perm(static_cast<size_t>(out.rank()));
  perm[static_cast<size_t>(dn.output_batch_dimension)] = 0;
  perm[static_cast<size_t>(dn.output_feature_dimension)] = S + 1;
  for (int64_t d = 0; d < S; ++d)
    perm[static_cast<size_t>(dn.output_spatial_dimensions[d])] = d + 1;
  TPUSIM_ASSIGN_OR_RETURN(result, Transpose(ylit, perm, out, options));
  return OkStatus();
}

}  // namespace

StatusOr<Literal> Convolution(const Literal& lhs, const Literal& rhs, const ConvolutionParams& p,
                              const Shape& out, const KernelOptions& options) {
  const ConvolutionDimensionNumbers& dn = p.dnums;
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("convolution {} x {} -> {}: {}", lhs.shape().ToString(false),
                                       rhs.shape().ToString(false), out.ToString(false), why));
  };
  const size_t S = dn.input_spatial_dimensions.size();
  const int64_t rank = lhs.shape().rank();
  if (rhs.shape().rank() != rank || out.rank() != rank || static_cast<int64_t>(S) + 2 != rank ||
      dn.kernel_spatial_dimensions.size() != S || dn.output_spatial_dimensions.size() != S ||
      p.window.dimensions.size() != S) {
    return bad("ranks, dim_labels and window disagree");
  }
  auto ok_dim = [rank](int64_t d) { return d >= 0 && d < rank; };
  for (int64_t d : {dn.input_batch_dimension, dn.input_feature_dimension,
                    dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
                    dn.output_batch_dimension, dn.output_feature_dimension}) {
    if (!ok_dim(d)) return bad("dimension label out of range");
  }
  for (size_t i = 0; i < S; ++i) {
    if (!ok_dim(dn.input_spatial_dimensions[i]) || !ok_dim(dn.kernel_spatial_dimensions[i]) ||
        !ok_dim(dn.output_spatial_dimensions[i])) {
      return bad("dimension label out of range");
    }
  }
  if (IsInteger(lhs.element_type()) || IsInteger(out.element_type()) ||
      lhs.element_type() == PrimitiveType::kPred) {
    return Unimplemented(
        fmt::format("convolution on element type {} is not supported by the CPU "
                    "evaluator (floating point only)",
                    PrimitiveTypeName(lhs.element_type())));
  }
  const int64_t G = p.feature_group_count, BG = p.batch_group_count;
  if (G < 1 || BG < 1) return bad("group counts must be >= 1");
  if (G > 1 && BG > 1) {
    return Unimplemented("convolution with both feature_group_count and batch_group_count > 1");
  }
  const int64_t N = lhs.shape().dimensions(dn.input_batch_dimension);
  const int64_t C = lhs.shape().dimensions(dn.input_feature_dimension);
  const int64_t I = rhs.shape().dimensions(dn.kernel_input_feature_dimension);
  const int64_t O = rhs.shape().dimensions(dn.kernel_output_feature_dimension);
  if (C != I * G)
    return bad(fmt::format("input features {} != kernel input features {} x feature_group_count {}",
                           C, I, G));
  if (O % G != 0 || O % BG != 0) return bad("output features not divisible by the group count");
  if (N % BG != 0) return bad("batch not divisible by batch_group_count");
  if (out.dimensions(dn.output_batch_dimension) != N / BG ||
      out.dimensions(dn.output_feature_dimension) != O) {
    return bad("result batch/feature sizes are wrong");
  }
  for (size_t d = 0; d < S; ++d) {
    const WindowDimension& w = p.window.dimensions[d];
    int64_t in = lhs.shape().dimensions(dn.input_spatial_dimensions[d]);
    int64_t k = rhs.shape().dimensions(dn.kernel_spatial_dimensions[d]);
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return bad("stride and dilations must be >= 1");
    }
    if (w.size != k)
      return bad(fmt::format("window size {} != kernel size {} in spatial dim {}", w.size, k, d));
    int64_t padded =
        (in == 0 ? 0 : (in - 1) * w.base_dilation + 1) + w.padding_low + w.padding_high;
    int64_t dilated_k = (k - 1) * w.window_dilation + 1;
    int64_t expect = padded < dilated_k ? 0 : (padded - dilated_k) / w.stride + 1;
    if (out.dimensions(dn.output_spatial_dimensions[d]) != expect) {
      return bad(fmt::format("spatial dim {} should have size {}", d, expect));
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  Status st =
      (lhs.element_type() == PrimitiveType::kF64 || rhs.element_type() == PrimitiveType::kF64)
          ? RunConvolution<double>(lhs, rhs, p, result, options)
          : RunConvolution<float>(lhs, rhs, p, result, options);
  TPUSIM_RETURN_IF_ERROR(st);
  return result;
}

}  // namespace tpusim::hlo
