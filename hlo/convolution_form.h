// The direct (implicit-GEMM) form of a convolution on a weight-stationary MXU, shared by the
// compiler, which emits it (compiler/lower/lower_convolution.cc), and the reference evaluator,
// which sums in its order (EvaluatorOptions::mxu_rows), so the two agree bit for bit.
//
// XLA's TPU backend never materializes an im2col matrix: a convolution is a loop over the
// kernel's window positions ("taps"), each a GEMM of the shifted input window [M, C] with the
// tap's weights [C, O], accumulated in the MXU's accumulators. The direct form here is that loop:
//   M = batch x output spatial positions (LHS rows, read from a VMEM band of the input),
//   K = (tap, input feature), cut into K tiles of at most R (core.mxu.rows) rows,
//   N = output features.
// A K tile is one tap's run of up to R input features, or — when the input has at most R/2
// features (a first layer's 3 RGB channels) and the window is not dilated along its minor
// spatial dimension — several consecutive taps of one window row with all their features, which
// lie next to each other in a row-major [.., W, C] input ("taps folded into the contraction
// dimension", as XLA's TPU backend does for small feature counts), so the array is not left C/R
// full.
//
// Taps are counted in input-offset order: tap (kh, kw) reads input position out * stride +
// k * window_dilation; with window reversal its weights are the kernel's tap (KH - 1 - kh, ...),
// so a reversed window (an input gradient's, or a `reverse` of the kernel folded into the window)
// has the same K tiles as the unreversed convolution of the reversed kernel.
//
// Summation order (what the evaluator reproduces): tiles in (window row, window column, feature)
// order; within a tile, products are summed in f32 in the tile's (tap, feature) order; tile sums
// are added to the accumulator one tile after another.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/attributes.h"

namespace tpusim::hlo {

/// One K tile: taps (kh, kw .. kw + taps - 1) of the window (input-offset order: tap kw reads
/// input column ow * stride + kw * window_dilation; with window reversal its weights are the
/// kernel's column KW - 1 - kw), features c0 .. c0 + c - 1 of each. K = taps * c <= R.
struct ConvKTile {
  int64_t kh = 0;
  int64_t kw = 0;
  int64_t taps = 1;
  int64_t c0 = 0;
  int64_t c = 0;
  int64_t k() const { return taps * c; }
};

/// A convolution with one or two spatial dimensions, no batch groups, feature groups of at least
/// mxu_rows / 8 input features (or none) and non-negative padding, in normalized 2-D terms (a 1-D
/// convolution has H = KH = OH = 1). Sizes are elements; the window fields are XLA's (Window):
/// stride, padding, base (lhs) dilation, window (rhs) dilation, reversal.
/// The spatial part both MXU forms share: input H x W, window KH x KW, output OH x OW, and XLA's
/// window attributes along H and W.
struct ConvGeometry {
  int64_t H = 1, W = 1, KH = 1, KW = 1, OH = 1, OW = 1;
  WindowDimension wh, ww;
};

struct DirectConvolution : ConvGeometry {
  int64_t N = 1, C = 1, O = 1;     // input [N, H, W, C], kernel [KH, KW, C, O], out [N, OH, OW, O]
  std::vector<ConvKTile> k_tiles;  // in summation order
  /// Feature groups (feature_group_count): C and O are one group's; the input holds groups * C
  /// features per pixel (group g's at g * C ..), the kernel and the output groups * O output
  /// features (group g's at g * O ..). Each group is a direct convolution of its own: the same
  /// band and kernel loads at the group's feature offset (XLA's TPU backend keeps grouped
  /// convolutions whole rather than expanding the kernel; see docs/codegen.md).
  int64_t groups = 1;
  int64_t Ct() const { return groups * C; }
  int64_t Ot() const { return groups * O; }
  /// Elements between consecutive images, input rows and input columns in the input as stored
  /// (row-major in the order `dnums` gives its dimensions; C counting all groups' features here):
  /// W * C, C and H * W * C for [N, H, W, C]; C * N, C and W * C * N for [H, W, N, C] (dim_labels
  /// 01bf), read in place.
  int64_t sN = 1, sH = 1, sW = 1;
  /// Window columns folded into N (WindowColumnsInN): the K tiles are (kh, features) only
  /// (taps = 1, kw = 0) and each one's weights are the window row's [C, KW * O] — column
  /// kw * O + o holds tap (kh, kw)'s output feature o. A matmul streams every input column the
  /// block's windows read; output (oh, ow) is the sum over kw, in kw order, of the popped column
  /// block kw at input column ow * stride + kw.
  bool columns_in_n = false;
};

/// Whether a kernel laid out `kernel_minor_to_major` (its physical order; empty = row-major)
/// keeps the window's minor spatial dimension next to the output features — minor-to-major
/// {o, kw, ..}, what XLA's TPU layout assignment gives a first layer's kernel with few input
/// features (the MLPerf v0.7 ResNet/Mask R-CNN space-to-depth stem: [4,4,12,64]{3,1,2,0} in
/// ../shared/calibration) — so that its window columns are folded into the MXU's N dimension
/// rather than its contraction dimension (DirectConvolution::columns_in_n).
bool KernelFoldsWindowColumnsIntoN(const std::vector<int64_t>& kernel_minor_to_major,
                                   const ConvolutionDimensionNumbers& dnums);

/// The direct form of a convolution with input dims `lhs`, kernel dims `rhs` and output dims
/// `out` (logical, in the order `dnums` names them) on an MXU of `mxu_rows` rows; nullopt when it
/// takes another form: batch_group_count > 1, feature groups of fewer than mxu_rows / 8 input
/// features (VpuConvolution), more than two spatial dimensions, negative padding, or a
/// filter-gradient shape (a window with more positions than the output has per image, where the
/// contraction runs over the window). `columns_in_n` (KernelFoldsWindowColumnsIntoN) asks for the
/// window columns folded into N; it is taken when the convolution has no feature groups, at most
/// mxu_rows / 2 input features, KW > 1 and no window dilation, base dilation or reversal along W.
std::optional<DirectConvolution> PlanDirectConvolution(
    const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
    const std::vector<int64_t>& out, const Window& window, const ConvolutionDimensionNumbers& dnums,
    int64_t feature_group_count, int64_t batch_group_count, int64_t mxu_rows,
    bool columns_in_n = false);

/// The vector-unit form of a grouped convolution with few input features per group (a depthwise
/// convolution: one per group; its input gradient: the depthwise multiplier's), as XLA's TPU
/// backend runs depthwise convolutions (convolution_group_converter leaves them to the code
/// generator, which needs no filter expansion): output features on the VPU lanes, and per window
/// position ("tap") and input feature j of a group, a multiply-accumulate of the shifted input
/// window — lane o reading input feature (o / og) * cg + j — by that tap's weight row [G * og].
/// No MXU, no im2col. Input [N, H, W, G * cg] (features minor; batch and spatial dimensions in any
/// order, at strides sN, sH, sW elements), kernel [KH, KW, cg, G * og], output [N, OH, OW, G * og].
/// Normalized 2-D like DirectConvolution. Summation order: per output element, the products in
/// (tap row-major, j) order — the evaluator's im2col order — added one after another in f32 (s32
/// for integers).
struct VpuConvolution : ConvGeometry {
  int64_t N = 1, G = 1, cg = 1, og = 1;
  int64_t sN = 1, sH = 1, sW = 1;
  int64_t C() const { return G * cg; }
  int64_t O() const { return G * og; }
};

/// The VPU form (VpuConvolution): feature_group_count G > 1 with C / G * 8 < mxu_rows, no batch
/// groups, one or two spatial dimensions, non-negative padding, no window reversal (the lowering
/// reverses the kernel first); nullopt otherwise.
std::optional<VpuConvolution> PlanVpuConvolution(const std::vector<int64_t>& lhs,
                                                 const std::vector<int64_t>& rhs,
                                                 const std::vector<int64_t>& out,
                                                 const Window& window,
                                                 const ConvolutionDimensionNumbers& dnums,
                                                 int64_t feature_group_count,
                                                 int64_t batch_group_count, int64_t mxu_rows);

/// The filter-gradient form: a convolution whose window is larger than its output (XLA's
/// backward-filter convolution, e.g. dim_labels f01b_i01o->01bf, window = the output gradient's
/// spatial size) contracts over the window, not over the features. On the MXU:
///   M = the convolution's batch B (the layer's input features), one accumulator block per output
///       position (the layer's filter taps),
///   K = (input feature f (the layer's batch), window row, window column), cut into K tiles of at
///       most R window columns of one window row and one f,
///   N = output features (the layer's output features).
/// The stationary weights are tiles of the kernel operand (the output gradient); the LHS rows are
/// the input band transposed on the XLU ([B, positions]), read at each output position's offset.
/// Normalized 2-D like DirectConvolution: input [F, H, W, B], kernel [F, KH, KW, O], output
/// [OH, OW, B, O]. The input's dimensions may be stored in another order (an image-minor `01bf`
/// input, as XLA's TPU layouts keep a first layer's images on the lanes): sF, sH, sW, sB are
/// their row-major strides in elements as stored (f01b: H*W*B, W*B, B, 1).
struct FilterGradientConvolution : ConvGeometry {
  int64_t F = 1, B = 1, O = 1;
  int64_t sF = 1, sH = 1, sW = 1, sB = 1;
  /// K tiles in summation order. Position tiles (feature_tiles false): for each f, runs of up to
  /// R consecutive window positions in row-major order (flat index kh * KW + kw), crossing window
  /// rows when the window is not dilated along H (so a small window, 14 x 14, still fills the
  /// array's rows); one window row at most otherwise. Feature tiles (true): for each chunk of R
  /// features, for each window position in row-major order, one tile of the chunk's features at
  /// that position — the form whose tiles fill more of the array's rows is chosen
  /// (FilterGradientFeatureTiles): Mask R-CNN's 14 x 14 window over 512 ROIs fills 196 of 256
  /// rows with position tiles, all of them with feature tiles.
  struct KTile {
    // Position tiles: feature f, window positions k0 .. k0 + count - 1.
    // Feature tiles: features f .. f + count - 1, window position k0.
    int64_t f = 0, k0 = 0, count = 1;
  };
  bool feature_tiles = false;
  std::vector<KTile> k_tiles;
};

/// Whether a filter-gradient convolution's input is stored [S.., B, F] (`01bf`: its spatial
/// dimensions in order, then the batch, then the feature dimension — the images — minor).
bool FilterGradInputIsSpatialBatchImage(const ConvolutionDimensionNumbers& dnums);

/// Whether a filter-gradient convolution's K tiles run over features (F of them, per window
/// position) rather than over window positions (per feature): true when ceil(F / R) tiles of
/// features fill a larger share of the array's R rows than the position runs do (position runs
/// stop at window rows when `cross_rows` is false). A compiler choice, the same for every shape.
bool FilterGradientFeatureTiles(int64_t F, int64_t KH, int64_t KW, bool cross_rows,
                                int64_t mxu_rows);

/// The filter-gradient form of a convolution (see FilterGradientConvolution); nullopt unless it
/// has no feature or batch groups, one or two spatial dimensions, non-negative padding, no base
/// (lhs) dilation or window reversal, and a window with more positions than its output. (A window
/// dilation — the filter gradient of a strided convolution — is allowed.)
std::optional<FilterGradientConvolution> PlanFilterGradientConvolution(
    const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
    const std::vector<int64_t>& out, const Window& window, const ConvolutionDimensionNumbers& dnums,
    int64_t feature_group_count, int64_t batch_group_count, int64_t mxu_rows);

/// A convolution with negative edge padding read as one on a slice of its input (the rows a
/// negative pad cuts off reach no output): along each spatial dimension with padding_low or
/// padding_high < 0, the input is sliced to [start, limit) = [-min(low, 0), size + min(high, 0))
/// and the padding becomes (max(low, 0), max(high, 0)). `lhs` is the sliced input's dimensions.
/// nullopt when no padding is negative, a dimension with negative padding has base dilation, or a
/// slice would be empty. What compiler/passes/convolution_negative_padding.h applies before the
/// MXU forms, and what the summation order below assumes.
struct SlicedConvolutionInput {
  std::vector<int64_t> lhs, start, limit;
  Window window;
};
std::optional<SlicedConvolutionInput> SliceNegativePadding(
    const std::vector<int64_t>& lhs, const Window& window,
    const ConvolutionDimensionNumbers& dnums);

/// The MXU's summation order of a convolution on an R-row MXU, as indices into the evaluator's
/// im2col contraction axis ((window position, input feature) order, window positions row-major):
/// `order` lists the K indices in the order they are summed and `tile_ends` where each K tile ends
/// in that list. The direct form keeps im2col order (per feature group); the filter-gradient form
/// is feature-major; the VPU form is one tile in im2col order; any other convolution (im2col +
/// dot) sums im2col order in R-row tiles. Window positions count in
/// input-offset order (the kernel reversed first where the window is); a window reversal matters
/// only to the direct form, the others take the reversed kernel and an unreversed window. Negative
/// padding is read as SliceNegativePadding does (the same K axis).
/// With the window columns folded into N (DirectConvolution::columns_in_n) the K indices are
/// summed column by column: `partial_ends` (indices into tile_ends) says after which tile a
/// column's partial sum ends; the partial sums are then added in f32 in order (the VPU's adds of
/// the popped column blocks).
struct ConvSummationOrder {
  std::vector<int64_t> order;  // empty = identity
  std::vector<int64_t> tile_ends;
  std::vector<int64_t> partial_ends;  // empty = one sum
};
ConvSummationOrder ConvolutionSummationOrder(const std::vector<int64_t>& lhs,
                                             const std::vector<int64_t>& rhs,
                                             const std::vector<int64_t>& out, const Window& window,
                                             const ConvolutionDimensionNumbers& dnums,
                                             int64_t feature_group_count, int64_t batch_group_count,
                                             int64_t mxu_rows, bool columns_in_n = false);

}  // namespace tpusim::hlo
