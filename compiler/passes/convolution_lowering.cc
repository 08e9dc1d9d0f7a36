#include "compiler/passes/convolution_lowering.h"

#include <algorithm>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/convolution_form.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

class ConvBuilder {
 public:
  ConvBuilder(hlo::HloComputation* comp, HloInstruction* conv) : b_(comp, conv), conv_(conv) {}

  std::string Name(const std::string& s) { return b_.UniqueName(conv_->name() + "." + s); }

  HloInstruction* Transpose(HloInstruction* x, const std::vector<int64_t>& perm) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity = identity && perm[i] == static_cast<int64_t>(i);
    if (identity) return x;
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(x->shape().dimensions(p));
    auto t = std::make_unique<HloInstruction>(HloOpcode::kTranspose,
                                              Shape(x->shape().element_type(), dims), Name("t"));
    t->mutable_dimensions() = perm;
    t->set_has_dimensions(true);
    t->AppendOperand(x);
    return b_.Add(std::move(t));
  }
  HloInstruction* Reshape(HloInstruction* x, const std::vector<int64_t>& dims) {
    if (x->shape().dimensions() == dims) return x;
    auto r = std::make_unique<HloInstruction>(HloOpcode::kReshape,
                                              Shape(x->shape().element_type(), dims), Name("r"));
    r->AppendOperand(x);
    return b_.Add(std::move(r));
  }
  /// `x` (a kernel) reversed along `dims`: one `reverse`, which the lowering copies with
  /// negative strides (Lowerer::LowerReverse).
  HloInstruction* Reverse(HloInstruction* x, const std::vector<int64_t>& dims) {
    auto r = std::make_unique<HloInstruction>(HloOpcode::kReverse, x->shape(), Name("reversed"));
    r->mutable_shape().clear_layout();
    r->mutable_dimensions() = dims;
    r->set_has_dimensions(true);
    r->AppendOperand(x);
    return b_.Add(std::move(r));
  }
  HloInstruction* Pad(HloInstruction* x, const hlo::PaddingConfig& pc) {
    HloInstruction* zero = b_.ScalarConstant(x->shape().element_type(), 0.0, "pad_value");
    return b_.Pad(x, zero, pc, "pad");
  }
  HloInstruction* Slice(HloInstruction* x, const std::vector<int64_t>& start,
                        const std::vector<int64_t>& limit, const std::vector<int64_t>& step) {
    return b_.Slice(x, start, limit, step, "patch");
  }
  HloInstruction* Concat(const std::vector<HloInstruction*>& xs, int64_t dim,
                         const std::string& name = "im2col") {
    if (xs.size() == 1) return xs[0];
    std::vector<int64_t> dims = xs[0]->shape().dimensions();
    dims[static_cast<size_t>(dim)] = 0;
    for (const HloInstruction* x : xs) dims[static_cast<size_t>(dim)] += x->shape().dimensions(dim);
    auto c = std::make_unique<HloInstruction>(
        HloOpcode::kConcatenate, Shape(xs[0]->shape().element_type(), dims), Name(name));
    c->mutable_dimensions() = {dim};
    c->set_has_dimensions(true);
    for (HloInstruction* x : xs) c->AppendOperand(x);
    return b_.Add(std::move(c));
  }
  /// `c` (operands appended) with `dn`, this convolution's window, precision and feature groups,
  /// no batch groups.
  HloInstruction* NewConv(std::unique_ptr<HloInstruction> c,
                          const hlo::ConvolutionDimensionNumbers& dn) {
    c->mutable_convolution_dimension_numbers() = dn;
    c->set_has_convolution_dimension_numbers(true);
    c->mutable_window() = conv_->window();
    c->set_has_window(true);
    c->set_feature_group_count(conv_->feature_group_count());
    c->set_batch_group_count(1);
    c->mutable_precision_config() = conv_->precision_config();
    return b_.Add(std::move(c));
  }
  /// The convolution in canonical dim_labels (b01f_01io->b01f, or 01oi when the kernel's input
  /// feature is its minor dimension): operands transposed to [N, S.., C] and [S.., C, O] /
  /// [S.., O, C], result [N, O.., F].
  HloInstruction* CanonicalConv(HloInstruction* lhs, HloInstruction* rhs, bool kernel_oi,
                                const std::vector<int64_t>& out_dims, bool input_in_place) {
    const hlo::ConvolutionDimensionNumbers& cd = conv_->convolution_dimension_numbers();
    const size_t k = cd.input_spatial_dimensions.size();
    auto c = std::make_unique<HloInstruction>(
        HloOpcode::kConvolution, Shape(conv_->shape().element_type(), out_dims), Name("direct"));
    c->AppendOperand(lhs);
    c->AppendOperand(rhs);
    hlo::ConvolutionDimensionNumbers dn;
    const auto k64 = static_cast<int64_t>(k);
    dn.input_batch_dimension = 0;
    dn.input_feature_dimension = k64 + 1;
    dn.kernel_input_feature_dimension = kernel_oi ? k64 + 1 : k64;
    dn.kernel_output_feature_dimension = kernel_oi ? k64 : k64 + 1;
    dn.output_batch_dimension = 0;
    dn.output_feature_dimension = k64 + 1;
    for (int64_t i = 0; i < k64; ++i) {
      dn.input_spatial_dimensions.push_back(i + 1);
      dn.kernel_spatial_dimensions.push_back(i);
      dn.output_spatial_dimensions.push_back(i + 1);
    }
    if (input_in_place) {  // the input's batch and spatial dimensions where they are
      dn.input_batch_dimension = cd.input_batch_dimension;
      dn.input_spatial_dimensions = cd.input_spatial_dimensions;
    }
    return NewConv(std::move(c), dn);
  }
  /// The convolution in the filter-gradient form's canonical dim_labels (f01b_i01o->01bf):
  /// input [F, S.., B], kernel [F, S.., O], output [S.., B, O]; with `input_in_place` the input
  /// keeps its own dimension order (FilterGradInputInPlace).
  HloInstruction* CanonicalFilterGradConv(HloInstruction* lhs, HloInstruction* rhs,
                                          const std::vector<int64_t>& out_dims,
                                          bool input_in_place) {
    const auto k = static_cast<int64_t>(
        conv_->convolution_dimension_numbers().input_spatial_dimensions.size());
    auto c = std::make_unique<HloInstruction>(HloOpcode::kConvolution,
                                              Shape(conv_->shape().element_type(), out_dims),
                                              Name("filter_grad"));
    c->AppendOperand(lhs);
    c->AppendOperand(rhs);
    hlo::ConvolutionDimensionNumbers dn;
    dn.input_feature_dimension = 0;
    dn.input_batch_dimension = k + 1;
    dn.kernel_input_feature_dimension = 0;
    dn.kernel_output_feature_dimension = k + 1;
    dn.output_batch_dimension = k;
    dn.output_feature_dimension = k + 1;
    for (int64_t i = 0; i < k; ++i) {
      dn.input_spatial_dimensions.push_back(i + 1);
      dn.kernel_spatial_dimensions.push_back(i + 1);
      dn.output_spatial_dimensions.push_back(i);
    }
    if (input_in_place) {
      const auto& cd = conv_->convolution_dimension_numbers();
      dn.input_feature_dimension = cd.input_feature_dimension;
      dn.input_batch_dimension = cd.input_batch_dimension;
      dn.input_spatial_dimensions = cd.input_spatial_dimensions;
    }
    return NewConv(std::move(c), dn);
  }
  HloInstruction* Dot(HloInstruction* l, HloInstruction* r, bool batched,
                      const std::vector<int64_t>& out_dims) {
    auto d = std::make_unique<HloInstruction>(
        HloOpcode::kDot, Shape(conv_->shape().element_type(), out_dims), Name("gemm"));
    d->AppendOperand(l);
    d->AppendOperand(r);
    auto& dn = d->mutable_dot_dimension_numbers();
    if (batched) {
      dn.lhs_batch_dimensions = {0};
      dn.rhs_batch_dimensions = {0};
    }
    dn.lhs_contracting_dimensions = {batched ? 2 : 1};
    dn.rhs_contracting_dimensions = {batched ? 1 : 0};
    d->mutable_precision_config() = conv_->precision_config();
    return b_.Add(std::move(d));
  }

 private:
  HloBuilder b_;
  HloInstruction* conv_;
};

bool Lowerable(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.batch_group_count() < 1) return false;
  const auto& cd = conv.convolution_dimension_numbers();
  if (conv.batch_group_count() > 1) {
    // Weight gradients of (depthwise) convolutions: batch groups pair with output feature groups.
    const int64_t bg = conv.batch_group_count();
    if (conv.feature_group_count() != 1 ||
        conv.operand(0)->shape().dimensions(cd.input_batch_dimension) % bg != 0 ||
        conv.operand(1)->shape().dimensions(cd.kernel_output_feature_dimension) % bg != 0) {
      return false;
    }
  }
  const size_t k = cd.input_spatial_dimensions.size();
  if (conv.window().dimensions.size() != k || conv.feature_group_count() < 1) return false;
  for (const auto& w : conv.window().dimensions) {
    if (w.window_reversal || w.padding_low < 0 || w.padding_high < 0 || w.stride < 1 ||
        w.base_dilation < 1 || w.window_dilation < 1) {
      return false;
    }
  }
  return true;
}

// A convolution with a direct form (hlo/convolution_form.h) stays a convolution, in
// canonical dim_labels, for the direct kernel (compiler/lower/lower_convolution.cc). An input whose
// feature dimension is its last (minor) one is read in place whatever the order of its batch and
// spatial dimensions (01bf: the kernel's band loads stride over it, DirectConvolution::sN/sH/sW);
// other inputs, the kernel and the result in other dim_labels are transposed (a documented
// departure from XLA, whose layout assignment picks the layouts instead).
// `force_io`: the kernel is brought to [S.., C, O] whatever its order (the VPU form reads weight
// rows of output features).
void Canonicalize(hlo::HloComputation& comp, HloInstruction* conv, bool force_io = false) {
  const auto& cd = conv->convolution_dimension_numbers();
  const bool input_in_place =
      cd.input_feature_dimension == conv->operand(0)->shape().rank() - 1;
  const size_t k = cd.input_spatial_dimensions.size();
  std::vector<int64_t> in_perm{cd.input_batch_dimension};
  for (int64_t d : cd.input_spatial_dimensions) in_perm.push_back(d);
  in_perm.push_back(cd.input_feature_dimension);
  const bool kernel_oi =
      !force_io && cd.kernel_input_feature_dimension > cd.kernel_output_feature_dimension;
  std::vector<int64_t> k_perm(cd.kernel_spatial_dimensions);
  k_perm.push_back(kernel_oi ? cd.kernel_output_feature_dimension
                             : cd.kernel_input_feature_dimension);
  k_perm.push_back(kernel_oi ? cd.kernel_input_feature_dimension
                             : cd.kernel_output_feature_dimension);
  std::vector<int64_t> out_dims{conv->shape().dimensions(cd.output_batch_dimension)};
  for (int64_t d : cd.output_spatial_dimensions) out_dims.push_back(conv->shape().dimensions(d));
  out_dims.push_back(conv->shape().dimensions(cd.output_feature_dimension));
  std::vector<int64_t> out_perm(k + 2);
  out_perm[static_cast<size_t>(cd.output_batch_dimension)] = 0;
  for (size_t i = 0; i < k; ++i) {
    out_perm[static_cast<size_t>(cd.output_spatial_dimensions[i])] = static_cast<int64_t>(i) + 1;
  }
  out_perm[static_cast<size_t>(cd.output_feature_dimension)] = static_cast<int64_t>(k) + 1;
  ConvBuilder cb(&comp, conv);
  HloInstruction* direct =
      cb.CanonicalConv(input_in_place ? conv->operand(0) : cb.Transpose(conv->operand(0), in_perm),
                       cb.Transpose(conv->operand(1), k_perm), kernel_oi, out_dims,
                       input_in_place);
  HloInstruction* result = cb.Transpose(direct, out_perm);
  conv->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(conv);
}

// Canonical for the direct kernel: kernel and output in canonical dim_labels, the input with its
// feature dimension last (its batch and spatial dimensions in any order: read in place).
bool IsCanonicalDirect(const HloInstruction& conv) {
  const auto& cd = conv.convolution_dimension_numbers();
  const int64_t k = static_cast<int64_t>(cd.input_spatial_dimensions.size());
  if (cd.input_feature_dimension != k + 1 ||
      cd.output_batch_dimension != 0 || cd.output_feature_dimension != k + 1 ||
      std::max(cd.kernel_input_feature_dimension, cd.kernel_output_feature_dimension) != k + 1 ||
      std::min(cd.kernel_input_feature_dimension, cd.kernel_output_feature_dimension) != k) {
    return false;
  }
  for (int64_t i = 0; i < k; ++i) {
    if (cd.kernel_spatial_dimensions[static_cast<size_t>(i)] != i ||
        cd.output_spatial_dimensions[static_cast<size_t>(i)] != i + 1) {
      return false;
    }
  }
  return true;
}

// Whether the filter-gradient kernel reads the input of `conv` (in the form `g`) where it is: an
// input whose feature dimension — the layer's images — is its last one, as XLA's TPU layouts keep
// a first layer's 16 images on the lanes (SSD's `bf16[300,300,3,16]` 01bf), is read in place by
// the position-tile kernel, whose band loads stride over the input as stored
// (FilterGradientConvolution::sF..sB), instead of being transposed through HBM. Other inputs, and
// every input of the feature-tile form, are transposed to f01b.
bool FilterGradInputInPlace(const HloInstruction& conv, const hlo::FilterGradientConvolution& g) {
  const auto& cd = conv.convolution_dimension_numbers();
  return !g.feature_tiles && cd.input_feature_dimension == conv.operand(0)->shape().rank() - 1;
}

// A filter-gradient convolution (hlo/convolution_form.h) in the dim_labels XLA gives it,
// f01b_i01o->01bf, runs as it is (with `input_in_place`, whatever its input's order); other
// dim_labels are transposed to those.
bool IsCanonicalFilterGrad(const HloInstruction& conv, bool input_in_place) {
  const auto& cd = conv.convolution_dimension_numbers();
  const int64_t k = static_cast<int64_t>(cd.input_spatial_dimensions.size());
  const bool input_ok =
      input_in_place || (cd.input_feature_dimension == 0 && cd.input_batch_dimension == k + 1);
  if (!input_ok || cd.kernel_input_feature_dimension != 0 ||
      cd.kernel_output_feature_dimension != k + 1 ||
      cd.output_batch_dimension != k || cd.output_feature_dimension != k + 1) {
    return false;
  }
  for (int64_t i = 0; i < k; ++i) {
    if ((!input_in_place && cd.input_spatial_dimensions[static_cast<size_t>(i)] != i + 1) ||
        cd.kernel_spatial_dimensions[static_cast<size_t>(i)] != i + 1 ||
        cd.output_spatial_dimensions[static_cast<size_t>(i)] != i) {
      return false;
    }
  }
  return true;
}

void CanonicalizeFilterGrad(hlo::HloComputation& comp, HloInstruction* conv, bool input_in_place) {
  const auto& cd = conv->convolution_dimension_numbers();
  const size_t k = cd.input_spatial_dimensions.size();
  std::vector<int64_t> in_perm{cd.input_feature_dimension};
  for (int64_t d : cd.input_spatial_dimensions) in_perm.push_back(d);
  in_perm.push_back(cd.input_batch_dimension);
  std::vector<int64_t> k_perm{cd.kernel_input_feature_dimension};
  for (int64_t d : cd.kernel_spatial_dimensions) k_perm.push_back(d);
  k_perm.push_back(cd.kernel_output_feature_dimension);
  std::vector<int64_t> out_dims;
  for (int64_t d : cd.output_spatial_dimensions) out_dims.push_back(conv->shape().dimensions(d));
  out_dims.push_back(conv->shape().dimensions(cd.output_batch_dimension));
  out_dims.push_back(conv->shape().dimensions(cd.output_feature_dimension));
  std::vector<int64_t> out_perm(k + 2);
  for (size_t i = 0; i < k; ++i) {
    out_perm[static_cast<size_t>(cd.output_spatial_dimensions[i])] = static_cast<int64_t>(i);
  }
  out_perm[static_cast<size_t>(cd.output_batch_dimension)] = static_cast<int64_t>(k);
  out_perm[static_cast<size_t>(cd.output_feature_dimension)] = static_cast<int64_t>(k) + 1;
  ConvBuilder cb(&comp, conv);
  HloInstruction* fg = cb.CanonicalFilterGradConv(
      input_in_place ? conv->operand(0) : cb.Transpose(conv->operand(0), in_perm),
      cb.Transpose(conv->operand(1), k_perm), out_dims, input_in_place);
  HloInstruction* result = cb.Transpose(fg, out_perm);
  conv->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(conv);
}

void Lower(hlo::HloComputation& comp, HloInstruction* conv) {
  ConvBuilder cb(&comp, conv);
  const auto& cd = conv->convolution_dimension_numbers();
  const auto& win = conv->window().dimensions;
  const size_t k = cd.input_spatial_dimensions.size();
  const int64_t G = conv->feature_group_count();
  const int64_t BG = conv->batch_group_count();

  // 1. Input -> [N, S1..Sk, C], padded/dilated.
  std::vector<int64_t> in_perm{cd.input_batch_dimension};
  for (int64_t d : cd.input_spatial_dimensions) in_perm.push_back(d);
  in_perm.push_back(cd.input_feature_dimension);
  HloInstruction* x = cb.Transpose(conv->operand(0), in_perm);
  hlo::PaddingConfig pc;
  pc.dimensions.resize(k + 2);
  bool need_pad = false;
  for (size_t i = 0; i < k; ++i) {
    auto& p = pc.dimensions[i + 1];
    p.edge_padding_low = win[i].padding_low;
    p.edge_padding_high = win[i].padding_high;
    p.interior_padding = win[i].base_dilation - 1;
    need_pad = need_pad || p.edge_padding_low || p.edge_padding_high || p.interior_padding;
  }
  if (need_pad) x = cb.Pad(x, pc);
  const int64_t N = x->shape().dimensions(0);
  const int64_t C = x->shape().dimensions(static_cast<int64_t>(k) + 1);

  // 2. One strided slice per window position, concatenated along the features.
  std::vector<int64_t> out_spatial;
  for (size_t i = 0; i < k; ++i) {
    out_spatial.push_back(conv->shape().dimensions(cd.output_spatial_dimensions[i]));
  }
  std::vector<HloInstruction*> patches;
  std::vector<int64_t> w(k, 0);
  int64_t positions = 1;
  for (size_t i = 0; i < k; ++i) positions *= win[i].size;
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rem = p;
    for (size_t i = k; i-- > 0;) {
      w[i] = rem % win[i].size;
      rem /= win[i].size;
    }
    std::vector<int64_t> start{0}, limit{N}, step{1};
    for (size_t i = 0; i < k; ++i) {
      const int64_t s = w[i] * win[i].window_dilation;
      start.push_back(s);
      limit.push_back(s + (out_spatial[i] - 1) * win[i].stride + 1);
      step.push_back(win[i].stride);
    }
    start.push_back(0);
    limit.push_back(C);
    step.push_back(1);
    patches.push_back(cb.Slice(x, start, limit, step));
  }
  HloInstruction* cols = cb.Concat(patches, static_cast<int64_t>(k) + 1);
  int64_t M = N;
  for (int64_t o : out_spatial) M *= o;
  const int64_t cg = C / G;

  // 3. Kernel -> [Wn, C/G, O]; dot (batched over groups when G > 1).
  std::vector<int64_t> k_perm(cd.kernel_spatial_dimensions);
  k_perm.push_back(cd.kernel_input_feature_dimension);
  k_perm.push_back(cd.kernel_output_feature_dimension);
  HloInstruction* kern = cb.Transpose(conv->operand(1), k_perm);
  const int64_t O = conv->operand(1)->shape().dimensions(cd.kernel_output_feature_dimension);
  HloInstruction* result = nullptr;
  const int64_t Nout = N / BG;
  if (BG > 1) {
    // Output feature group g reads only input batch group g (batches g*Nout .. g*Nout+Nout-1, as
    // XLA's batch_group_count): a dot batched over the BG groups, [BG, M/BG, Wn*C] x
    // [BG, Wn*C, O/BG].
    const int64_t Mg = M / BG;
    HloInstruction* lhs = cb.Reshape(cols, {BG, Mg, positions * C});
    HloInstruction* rhs = cb.Reshape(kern, {positions * C, BG, O / BG});
    rhs = cb.Transpose(rhs, {1, 0, 2});
    HloInstruction* d = cb.Dot(lhs, rhs, true, {BG, Mg, O / BG});
    result = cb.Reshape(cb.Transpose(d, {1, 0, 2}), {Mg, O});
  } else if (G == 1) {
    HloInstruction* lhs = cb.Reshape(cols, {M, positions * C});
    HloInstruction* rhs = cb.Reshape(kern, {positions * cg, O});
    result = cb.Dot(lhs, rhs, false, {M, O});
  } else {
    HloInstruction* lhs = cb.Reshape(cols, {M, positions, G, cg});
    lhs = cb.Reshape(cb.Transpose(lhs, {2, 0, 1, 3}), {G, M, positions * cg});
    HloInstruction* rhs = cb.Reshape(kern, {positions * cg, G, O / G});
    rhs = cb.Transpose(rhs, {1, 0, 2});
    HloInstruction* d = cb.Dot(lhs, rhs, true, {G, M, O / G});
    result = cb.Reshape(cb.Transpose(d, {1, 0, 2}), {M, O});
  }
  // 4. [M, O] -> [N, O1..Ok, O] -> the output's dim_labels.
  std::vector<int64_t> nho{Nout};
  nho.insert(nho.end(), out_spatial.begin(), out_spatial.end());
  nho.push_back(O);
  result = cb.Reshape(result, nho);
  std::vector<int64_t> out_perm(static_cast<size_t>(conv->shape().rank()));
  out_perm[static_cast<size_t>(cd.output_batch_dimension)] = 0;
  for (size_t i = 0; i < k; ++i) {
    out_perm[static_cast<size_t>(cd.output_spatial_dimensions[i])] = static_cast<int64_t>(i) + 1;
  }
  out_perm[static_cast<size_t>(cd.output_feature_dimension)] = static_cast<int64_t>(k) + 1;
  result = cb.Transpose(result, out_perm);
  conv->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(conv);
}

// A `reverse` of the kernel's spatial dimensions (how JAX and PyTorch write an input-gradient
// convolution) becomes the convolution's window reversal, as XLA folds it: no reversed copy of the
// kernel is made. The reverse is removed when nothing else reads it.
bool FoldKernelReverse(hlo::HloComputation& comp, HloInstruction* conv) {
  HloInstruction* rev = conv->operand(1);
  if (rev->opcode() != HloOpcode::kReverse) return false;
  const auto& cd = conv->convolution_dimension_numbers();
  std::vector<size_t> window_dims;
  for (int64_t d : rev->dimensions()) {
    const auto it =
        std::find(cd.kernel_spatial_dimensions.begin(), cd.kernel_spatial_dimensions.end(), d);
    if (it == cd.kernel_spatial_dimensions.end()) return false;
    window_dims.push_back(static_cast<size_t>(it - cd.kernel_spatial_dimensions.begin()));
  }
  if (conv->window().dimensions.size() != cd.kernel_spatial_dimensions.size()) return false;
  for (size_t w : window_dims) {
    auto& wd = conv->mutable_window().dimensions[w];
    wd.window_reversal = !wd.window_reversal;
  }
  conv->ReplaceOperandWith(1, rev->operand(0));
  if (rev->users().empty() && rev != comp.root_instruction()) comp.RemoveInstruction(rev);
  return true;
}

// A window reversal only the direct form takes (it reads the kernel reversed as it loads it): for
// any other form (a grouped convolution, a feature map smaller than the window) the kernel is
// reversed — one `reverse` — and the window no longer is. The reference plans such a
// convolution the same way (hlo::ConvolutionSummationOrder).
bool UnfoldReversal(hlo::HloComputation& comp, HloInstruction* conv, int64_t mxu_rows) {
  auto& win = conv->mutable_window().dimensions;
  const auto& cd = conv->convolution_dimension_numbers();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < win.size() && i < cd.kernel_spatial_dimensions.size(); ++i) {
    if (win[i].window_reversal) dims.push_back(cd.kernel_spatial_dimensions[i]);
  }
  if (dims.empty() ||
      hlo::PlanDirectConvolution(conv->operand(0)->shape().dimensions(),
                                 conv->operand(1)->shape().dimensions(), conv->shape().dimensions(),
                                 conv->window(), cd, conv->feature_group_count(),
                                 conv->batch_group_count(), mxu_rows)) {
    return false;
  }
  ConvBuilder cb(&comp, conv);
  conv->ReplaceOperandWith(1, cb.Reverse(conv->operand(1), dims));
  for (auto& w : win) w.window_reversal = false;
  return true;
}

}  // namespace

StatusOr<bool> ConvolutionLowering::Run(hlo::HloModule& module) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    std::vector<HloInstruction*> all_convs;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == HloOpcode::kConvolution) all_convs.push_back(i.get());
    }
    for (HloInstruction* c : all_convs) {
      changed = FoldKernelReverse(*comp, c) || changed;
      changed = UnfoldReversal(*comp, c, mxu_rows_) || changed;
    }
    std::vector<HloInstruction*> convs;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == HloOpcode::kConvolution) convs.push_back(i.get());
    }
    for (HloInstruction* c : convs) {
      if (hlo::PlanDirectConvolution(c->operand(0)->shape().dimensions(),
                                     c->operand(1)->shape().dimensions(), c->shape().dimensions(),
                                     c->window(), c->convolution_dimension_numbers(),
                                     c->feature_group_count(), c->batch_group_count(), mxu_rows_)) {
        if (IsCanonicalDirect(*c)) continue;
        Canonicalize(*comp, c);
        changed = true;
      } else if (hlo::PlanVpuConvolution(
                     c->operand(0)->shape().dimensions(), c->operand(1)->shape().dimensions(),
                     c->shape().dimensions(), c->window(), c->convolution_dimension_numbers(),
                     c->feature_group_count(), c->batch_group_count(), mxu_rows_)) {
        const auto& cd = c->convolution_dimension_numbers();
        if (IsCanonicalDirect(*c) &&
            cd.kernel_input_feature_dimension < cd.kernel_output_feature_dimension) {
          continue;
        }
        Canonicalize(*comp, c, /*force_io=*/true);
        changed = true;
      } else if (const auto g = hlo::PlanFilterGradientConvolution(
                     c->operand(0)->shape().dimensions(), c->operand(1)->shape().dimensions(),
                     c->shape().dimensions(), c->window(), c->convolution_dimension_numbers(),
                     c->feature_group_count(), c->batch_group_count(), mxu_rows_)) {
        const bool in_place = FilterGradInputInPlace(*c, *g);
        if (IsCanonicalFilterGrad(*c, in_place)) continue;
        CanonicalizeFilterGrad(*comp, c, in_place);
        changed = true;
      } else if (Lowerable(*c)) {
        Lower(*comp, c);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
