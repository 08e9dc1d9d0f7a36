#include "hlo/shape_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <optional>

#include "hlo/computation.h"
#include "hlo/ragged_dot.h"
#include "hlo/shape_inference_async.h"
#include "hlo/shape_inference_complex.h"
#include "hlo/shape_inference_jax.h"
#include "hlo/shape_inference_linalg.h"
#include "hlo/shape_inference_views.h"

namespace tpusim::hlo {
namespace {

using Dims = std::vector<int64_t>;

Status Err(std::string message) { return InvalidArgument(std::move(message)); }

std::string DimsStr(const Dims& d) { return fmt::format("[{}]", fmt::join(d, ",")); }

Status ExpectOperands(const HloInstruction& inst, int64_t n) {
  if (inst.operand_count() != n) {
    return Err(fmt::format("expects {} operand(s), has {}", n, inst.operand_count()));
  }
  return OkStatus();
}

Status ExpectArray(const Shape& s, std::string_view what) {
  if (!s.IsArray()) return Err(fmt::format("{} must be an array, got {}", what, s.ToString(false)));
  return OkStatus();
}

bool ValidDim(int64_t d, int64_t rank) { return d >= 0 && d < rank; }

// Window output size per XLA (shape_inference.cc, InferWindowOutputShape): the base is dilated and
// padded, the window dilated, then floor((padded - window) / stride) + 1, or 0 if the window does
// not fit.
StatusOr<int64_t> WindowedDim(int64_t base, const WindowDimension& w) {
  if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
    return Err("window size, stride and dilations must be positive");
  }
  const int64_t dilated_base = base == 0 ? 0 : (base - 1) * w.base_dilation + 1;
  const int64_t padded = dilated_base + w.padding_low + w.padding_high;
  const int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
  if (padded < dilated_window) return int64_t{0};
  return (padded - dilated_window) / w.stride + 1;
}

Shape ArrayLike(PrimitiveType t, Dims dims) { return Shape(t, std::move(dims)); }

// The size of one replica group (0 if unknown).
int64_t GroupSize(const HloInstruction& inst, int64_t num_devices) {
  const ReplicaGroups& g = inst.replica_groups();
  if (g.iota_form) return g.iota.dims.size() == 2 ? g.iota.dims[1] : 0;
  if (!g.groups.empty()) return static_cast<int64_t>(g.groups[0].size());
  return num_devices;
}

StatusOr<Shape> InferElementwise(const HloInstruction& inst, const Shape& declared) {
  const HloOpcode op = inst.opcode();
  const HloOpcodeCategory cat = HloOpcodeCategoryOf(op);
  const int64_t arity = cat == HloOpcodeCategory::kUnary    ? 1
                        : cat == HloOpcodeCategory::kBinary ? 2
                                                            : 3;
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, arity));
  for (const HloInstruction* o : inst.operands())
    TPUSIM_RETURN_IF_ERROR(ExpectArray(o->shape(), "operand"));
  if (op == HloOpcode::kSelect || op == HloOpcode::kClamp) {
    // select(pred, on_true, on_false); clamp(min, x, max): the value operand fixes the shape, the
    // others are the same dims or scalars (pred of select: same dims or scalar).
    const Shape& value = inst.operand(1)->shape();
    const int64_t other = op == HloOpcode::kSelect ? 2 : 0;
    const Shape& o2 = inst.operand(other)->shape();
    if (op == HloOpcode::kSelect) {
      if (inst.operand(0)->shape().element_type() != PrimitiveType::kPred) {
        return Err("select predicate must be pred");
      }
      if (!(o2.dimensions() == value.dimensions()) || o2.element_type() != value.element_type()) {
        return Err(fmt::format("select branches differ: {} vs {}", value.ToString(false),
                               o2.ToString(false)));
      }
    }
    for (int64_t i : {int64_t{0}, int64_t{2}}) {
      const Shape& s = inst.operand(i)->shape();
      if (s.rank() != 0 && s.dimensions() != value.dimensions()) {
        return Err(fmt::format("operand {} {} is neither a scalar nor {}", i, s.ToString(false),
                               DimsStr(value.dimensions())));
      }
      if (op == HloOpcode::kClamp && s.element_type() != value.element_type()) {
        return Err("clamp operands must have the same element type");
      }
    }
    return ArrayLike(value.element_type(), value.dimensions());
  }
  TPUSIM_RETURN_IF_ERROR(CheckComplexElementTypes(inst));
  const Shape& a = inst.operand(0)->shape();
  if (arity == 2) {
    const Shape& b = inst.operand(1)->shape();
    if (a.dimensions() != b.dimensions()) {
      return Err(
          fmt::format("operands have different dimensions {} and {} (HLO does not broadcast "
                      "implicitly)",
                      DimsStr(a.dimensions()), DimsStr(b.dimensions())));
    }
    if (op == HloOpcode::kCompare) return ArrayLike(PrimitiveType::kPred, a.dimensions());
    if (op == HloOpcode::kStochasticConvert)
      return ArrayLike(declared.element_type(), a.dimensions());
    if (a.element_type() != b.element_type()) {
      return Err(fmt::format("operands have different element types {} and {}",
                             PrimitiveTypeName(a.element_type()),
                             PrimitiveTypeName(b.element_type())));
    }
    if (op == HloOpcode::kMulhi && !IsInteger(a.element_type())) {
      return Err(fmt::format("mulhi takes integer operands, got {}",
                             PrimitiveTypeName(a.element_type())));
    }
    if (op == HloOpcode::kComplex) {
      return ArrayLike(
          a.element_type() == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64,
          a.dimensions());
    }
    return ArrayLike(a.element_type(), a.dimensions());
  }
  // Unary.
  PrimitiveType t = a.element_type();
  if (op == HloOpcode::kConvert) t = declared.element_type();
  if (op == HloOpcode::kIsFinite) t = PrimitiveType::kPred;
  if (op == HloOpcode::kReal || op == HloOpcode::kImag || op == HloOpcode::kAbs) {
    t = ComplexComponentType(t);
  }
  return ArrayLike(t, a.dimensions());
}

StatusOr<Shape> InferDot(const HloInstruction& inst, const Shape& declared) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 2));
  return InferDotShape(inst.operand(0)->shape(), inst.operand(1)->shape(),
                       inst.dot_dimension_numbers(), declared.element_type());
}

}  // namespace

StatusOr<Shape> InferDotShape(const Shape& l, const Shape& r, const DotDimensionNumbers& d,
                              PrimitiveType type) {
  TPUSIM_RETURN_IF_ERROR(ExpectArray(l, "lhs"));
  TPUSIM_RETURN_IF_ERROR(ExpectArray(r, "rhs"));
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size() ||
      d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return Err("dot: lhs and rhs must have as many batch and as many contracting dimensions");
  }
  std::vector<bool> l_used(static_cast<size_t>(l.rank()), false),
      r_used(static_cast<size_t>(r.rank()), false);
  auto use = [](std::vector<bool>& used, int64_t dim, std::string_view side) -> Status {
    if (!ValidDim(dim, static_cast<int64_t>(used.size())) || used[static_cast<size_t>(dim)]) {
      return Err(fmt::format("dot: {} dimension {} is out of range or used twice", side, dim));
    }
    used[static_cast<size_t>(dim)] = true;
    return OkStatus();
  };
  Dims out;
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    const int64_t lb = d.lhs_batch_dimensions[i], rb = d.rhs_batch_dimensions[i];
    TPUSIM_RETURN_IF_ERROR(use(l_used, lb, "lhs batch"));
    TPUSIM_RETURN_IF_ERROR(use(r_used, rb, "rhs batch"));
    if (l.dimensions(lb) != r.dimensions(rb)) {
      return Err(fmt::format("dot: batch dimension sizes differ: lhs[{}]={} vs rhs[{}]={}", lb,
                             l.dimensions(lb), rb, r.dimensions(rb)));
    }
    out.push_back(l.dimensions(lb));
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    const int64_t lc = d.lhs_contracting_dimensions[i], rc = d.rhs_contracting_dimensions[i];
    TPUSIM_RETURN_IF_ERROR(use(l_used, lc, "lhs contracting"));
    TPUSIM_RETURN_IF_ERROR(use(r_used, rc, "rhs contracting"));
    if (l.dimensions(lc) != r.dimensions(rc)) {
      return Err(fmt::format("dot: contracting dimension sizes differ: lhs[{}]={} vs rhs[{}]={}",
                             lc, l.dimensions(lc), rc, r.dimensions(rc)));
    }
  }
  for (int64_t i = 0; i < l.rank(); ++i) {
    if (!l_used[static_cast<size_t>(i)]) out.push_back(l.dimensions(i));
  }
  for (int64_t i = 0; i < r.rank(); ++i) {
    if (!r_used[static_cast<size_t>(i)]) out.push_back(r.dimensions(i));
  }
  return ArrayLike(type, out);
}

namespace {

StatusOr<Shape> InferConvolution(const HloInstruction& inst, const Shape& declared) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 2));
  const Shape& in = inst.operand(0)->shape();
  const Shape& k = inst.operand(1)->shape();
  TPUSIM_RETURN_IF_ERROR(ExpectArray(in, "input"));
  TPUSIM_RETURN_IF_ERROR(ExpectArray(k, "kernel"));
  const ConvolutionDimensionNumbers& dn = inst.convolution_dimension_numbers();
  const int64_t spatial = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (in.rank() != spatial + 2 || k.rank() != spatial + 2) {
    return Err(fmt::format("convolution: dim_labels describe rank {} but input is {} and kernel {}",
                           spatial + 2, in.ToString(false), k.ToString(false)));
  }
  const Window& w = inst.window();
  if (static_cast<int64_t>(w.dimensions.size()) != spatial) {
    return Err(fmt::format("convolution: window has {} dimensions, dim_labels {} spatial",
                           w.dimensions.size(), spatial));
  }
  const int64_t fgc = inst.feature_group_count(), bgc = inst.batch_group_count();
  const int64_t batch = in.dimensions(dn.input_batch_dimension);
  const int64_t in_feat = in.dimensions(dn.input_feature_dimension);
  const int64_t k_in = k.dimensions(dn.kernel_input_feature_dimension);
  const int64_t k_out = k.dimensions(dn.kernel_output_feature_dimension);
  if (in_feat % fgc != 0 || in_feat / fgc != k_in) {
    return Err(
        fmt::format("convolution: input features {} / feature_group_count {} must equal the "
                    "kernel's input features {}",
                    in_feat, fgc, k_in));
  }
  if (k_out % fgc != 0) {
    return Err(
        fmt::format("convolution: kernel output features {} not divisible by "
                    "feature_group_count {}",
                    k_out, fgc));
  }
  if (batch % bgc != 0 || k_out % bgc != 0) {
    return Err(
        fmt::format("convolution: batch {} and output features {} must be divisible by "
                    "batch_group_count {}",
                    batch, k_out, bgc));
  }
  Dims out(static_cast<size_t>(spatial + 2), 0);
  out[static_cast<size_t>(dn.output_batch_dimension)] = batch / bgc;
  out[static_cast<size_t>(dn.output_feature_dimension)] = k_out;
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDimension& wd = w.dimensions[static_cast<size_t>(i)];
    const int64_t ksize = k.dimensions(dn.kernel_spatial_dimensions[static_cast<size_t>(i)]);
    if (wd.size != ksize) {
      return Err(
          fmt::format("convolution: window size {} in spatial dimension {} differs from the "
                      "kernel's {}",
                      wd.size, i, ksize));
    }
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t o,
        WindowedDim(in.dimensions(dn.input_spatial_dimensions[static_cast<size_t>(i)]), wd));
    out[static_cast<size_t>(dn.output_spatial_dimensions[static_cast<size_t>(i)])] = o;
  }
  return ArrayLike(declared.element_type(), out);
}

StatusOr<Shape> InferReduce(const HloInstruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (n < 1 || inst.operand_count() % 2 != 0) {
    return Err("reduce expects N inputs followed by N init values");
  }
  const Shape& first = inst.operand(0)->shape();
  for (int64_t i = 0; i < n; ++i) {
    TPUSIM_RETURN_IF_ERROR(ExpectArray(inst.operand(i)->shape(), "reduce input"));
    if (inst.operand(i)->shape().dimensions() != first.dimensions()) {
      return Err("reduce inputs must have the same dimensions");
    }
    if (inst.operand(n + i)->shape().rank() != 0) return Err("reduce init values must be scalars");
  }
  std::vector<bool> reduced(static_cast<size_t>(first.rank()), false);
  for (int64_t d : inst.dimensions()) {
    if (!ValidDim(d, first.rank()) || reduced[static_cast<size_t>(d)]) {
      return Err(fmt::format("reduce dimension {} is out of range or repeated for {}", d,
                             first.ToString(false)));
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  Dims out;
  for (int64_t i = 0; i < first.rank(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) out.push_back(first.dimensions(i));
  }
  if (n == 1) return ArrayLike(inst.operand(1)->shape().element_type(), out);
  std::vector<Shape> elems;
  for (int64_t i = 0; i < n; ++i)
    elems.push_back(ArrayLike(inst.operand(n + i)->shape().element_type(), out));
  return Shape::Tuple(std::move(elems));
}

StatusOr<Shape> InferReduceWindow(const HloInstruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (n < 1 || inst.operand_count() % 2 != 0) {
    return Err("reduce-window expects N inputs followed by N init values");
  }
  const Shape& first = inst.operand(0)->shape();
  TPUSIM_RETURN_IF_ERROR(ExpectArray(first, "reduce-window input"));
  if (static_cast<int64_t>(inst.window().dimensions.size()) != first.rank()) {
    return Err(fmt::format("reduce-window: window has {} dimensions, the input has rank {}",
                           inst.window().dimensions.size(), first.rank()));
  }
  Dims out;
  for (int64_t i = 0; i < first.rank(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t o,
        WindowedDim(first.dimensions(i), inst.window().dimensions[static_cast<size_t>(i)]));
    out.push_back(o);
  }
  if (n == 1) return ArrayLike(inst.operand(1)->shape().element_type(), out);
  std::vector<Shape> elems;
  for (int64_t i = 0; i < n; ++i)
    elems.push_back(ArrayLike(inst.operand(n + i)->shape().element_type(), out));
  return Shape::Tuple(std::move(elems));
}

StatusOr<Shape> InferCollective(const HloInstruction& inst, int64_t num_devices) {
  const HloOpcode op = inst.opcode();
  if (inst.operand_count() < 1) return Err("expects at least one operand");
  std::vector<Shape> outs;
  for (const HloInstruction* o : inst.operands()) {
    const Shape& s = o->shape();
    // Scalars pass through unchanged: PyTorch/XLA-Neuron dumps append an f32[]/bf16[] operand to
    // tuple all-gathers and reduce-scatters (pt_linear_model_zero1.hlo,
    // pt_llama2_tp4_pp2_collectives.hlo).
    if ((op == HloOpcode::kAllGather || op == HloOpcode::kReduceScatter) && s.IsArray() &&
        s.rank() > 0) {
      if (inst.dimensions().size() != 1 || !ValidDim(inst.dimensions(0), s.rank())) {
        return Err(fmt::format("needs dimensions={{d}} with d < rank {}", s.rank()));
      }
      const int64_t d = inst.dimensions(0);
      const int64_t g = GroupSize(inst, num_devices);
      Dims dims = s.dimensions();
      if (g <= 0) return Err("the replica group size is unknown");
      if (op == HloOpcode::kAllGather) {
        dims[static_cast<size_t>(d)] *= g;
      } else {
        if (dims[static_cast<size_t>(d)] % g != 0) {
          return Err(
              fmt::format("reduce-scatter dimension {} of size {} is not divisible by the "
                          "group size {}",
                          d, dims[static_cast<size_t>(d)], g));
        }
        dims[static_cast<size_t>(d)] /= g;
      }
      outs.push_back(ArrayLike(s.element_type(), dims));
    } else {
      outs.push_back(s);
    }
  }
  if (outs.size() == 1) return outs[0];
  return Shape::Tuple(std::move(outs));
}

}  // namespace

bool HasShapeInference(HloOpcode op) {
  if (IsElementwise(op)) return true;
  switch (op) {
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kCholesky:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kAddDependency:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kTopK:
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBroadcast:
    case HloOpcode::kCall:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kConcatenate:
    case HloOpcode::kConditional:
    case HloOpcode::kConstant:
    case HloOpcode::kConvolution:
    case HloOpcode::kDot:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kFft:
    case HloOpcode::kFusion:
    case HloOpcode::kGather:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kIota:
    case HloOpcode::kMap:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kPad:
    case HloOpcode::kParameter:
    case HloOpcode::kPartitionId:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kReplicaId:
    case HloOpcode::kReshape:
    case HloOpcode::kReverse:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kSlice:
    case HloOpcode::kSort:
    case HloOpcode::kTranspose:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile:
      return true;
    default:
      return false;
  }
}

std::vector<HloOpcode> OpcodesWithoutShapeInference() {
  std::vector<HloOpcode> out;
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const HloOpcode op = static_cast<HloOpcode>(i);
    if (!HasShapeInference(op)) out.push_back(op);
  }
  return out;
}

namespace {

// One function per opcode (or per family sharing a rule); InferShape dispatches on the opcode.

// The result element of an asynchronous pair's -done: copy-start gives (operand, result, context),
// collective-permute-start (operand, result, contexts...).
StatusOr<Shape> InferAsyncDone(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& start = inst.operand(0)->shape();
  const int64_t element = inst.opcode() == HloOpcode::kCopyDone ? 0 : 1;
  if (!start.IsTuple() || start.tuple_shapes_size() <= element) {
    return Err(
        fmt::format("the operand must be the tuple of its -start, got {}", start.ToString(false)));
  }
  return start.tuple_shapes(element);
}

StatusOr<Shape> InferGetTupleElement(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& tuple = inst.operand(0)->shape();
  if (!tuple.IsTuple() || inst.tuple_index() >= tuple.tuple_shapes_size()) {
    return Err(fmt::format("index {} is out of range for {}", inst.tuple_index(),
                           tuple.ToString(false)));
  }
  return tuple.tuple_shapes(inst.tuple_index());
}

// XLA: topk(x), k=K over the last dimension gives (x's type [..., K], s32[..., K]).
StatusOr<Shape> InferTopK(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& x = inst.operand(0)->shape();
  const std::string* k_text = inst.FindRawAttribute("k");
  int64_t k = -1;
  if (k_text != nullptr) {
    const auto [end, ec] = std::from_chars(k_text->data(), k_text->data() + k_text->size(), k);
    if (ec != std::errc() || end != k_text->data() + k_text->size()) k = -1;
  }
  if (!x.IsArray() || x.rank() < 1) return Err("topk needs an array of rank >= 1");
  const int64_t last = x.dimensions(x.rank() - 1);
  if (k < 1 || k > last) {
    return Err(fmt::format("k={} must be in [1, {}] (the last dimension of {})",
                           k_text ? *k_text : std::string("?"), last, x.ToString(false)));
  }
  Dims dims = x.dimensions();
  dims.back() = k;
  return Shape::Tuple({ArrayLike(x.element_type(), dims), ArrayLike(PrimitiveType::kS32, dims)});
}

// all-reduce, all-to-all, all-gather, reduce-scatter. For all-gather and reduce-scatter the
// dimension is checked even when the group size (and so the shape) is unknown: the lowering and the
// evaluator index the operand with it. With the group size unknown, the written shape must still be
// one some group size gives — the operand's, but for dimension d, which is a positive multiple
// (all-gather) or a positive divisor (reduce-scatter) of the operand's — and is accepted as written
// (nullopt).
StatusOr<std::optional<Shape>> InferReplicaGroupCollective(const HloInstruction& inst,
                                                           int64_t num_devices) {
  const HloOpcode op = inst.opcode();
  const Shape& declared = inst.shape();
  if (op == HloOpcode::kAllGather || op == HloOpcode::kReduceScatter) {
    for (const HloInstruction* o : inst.operands()) {
      const Shape& s = o->shape();
      if (s.IsArray() && s.rank() > 0 &&
          (inst.dimensions().size() != 1 || !ValidDim(inst.dimensions(0), s.rank()))) {
        return Err(fmt::format("needs dimensions={{d}} with d < rank {}", s.rank()));
      }
    }
    if (GroupSize(inst, num_devices) <= 0) {
      const Shape& o = inst.operand(0)->shape();
      if (inst.operand_count() == 1 && o.IsArray() && o.rank() > 0 && declared.IsArray()) {
        const int64_t d = inst.dimensions(0);
        bool ok = declared.rank() == o.rank();
        for (int64_t i = 0; ok && i < o.rank(); ++i) {
          const int64_t w = declared.dimensions(i), x = o.dimensions(i);
          if (i != d) {
            ok = w == x;
          } else if (op == HloOpcode::kAllGather) {
            ok = w > 0 && x > 0 && w % x == 0;
          } else {
            ok = w > 0 && x % w == 0;
          }
        }
        if (!ok) {
          return Err(fmt::format("{} is not {} along dimension {} by any group size",
                                 declared.ToString(false), o.ToString(false), d));
        }
      }
      return std::optional<Shape>();  // cannot infer the group size: accepted as written
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Shape s, InferCollective(inst, num_devices));
  return std::optional<Shape>(std::move(s));
}

StatusOr<Shape> InferBroadcast(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& declared = inst.shape();
  const Shape& o = inst.operand(0)->shape();
  if (!declared.IsArray() || static_cast<int64_t>(inst.dimensions().size()) != o.rank()) {
    return Err(
        fmt::format("broadcast dimensions {} must have one entry per operand dimension of {}",
                    DimsStr(inst.dimensions()), o.ToString(false)));
  }
  std::vector<bool> used(static_cast<size_t>(declared.rank()), false);
  for (int64_t i = 0; i < o.rank(); ++i) {
    const int64_t d = inst.dimensions(i);
    if (!ValidDim(d, declared.rank()) || declared.dimensions(d) != o.dimensions(i)) {
      return Err(
          fmt::format("broadcast: operand dimension {} (size {}) maps to output dimension {} "
                      "of {}",
                      i, o.dimensions(i), d, declared.ToString(false)));
    }
    // StableHLO broadcast_in_dim (C4): each output dimension is named once.
    if (used[static_cast<size_t>(d)]) {
      return Err(fmt::format("broadcast dimensions {} name output dimension {} twice",
                             DimsStr(inst.dimensions()), d));
    }
    used[static_cast<size_t>(d)] = true;
  }
  return ArrayLike(o.element_type(), declared.dimensions());
}

StatusOr<Shape> InferReshape(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& o = inst.operand(0)->shape();
  if (o.ElementCount() != inst.shape().ElementCount()) {
    return Err(fmt::format("reshape from {} to {} changes the element count", o.ToString(false),
                           inst.shape().ToString(false)));
  }
  return ArrayLike(o.element_type(), inst.shape().dimensions());
}

StatusOr<Shape> InferTranspose(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& o = inst.operand(0)->shape();
  Dims perm = inst.dimensions();
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  Dims iota(static_cast<size_t>(o.rank()));
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) {
    return Err(fmt::format("transpose dimensions {} are not a permutation of rank {}",
                           DimsStr(perm), o.rank()));
  }
  Dims out;
  for (int64_t p : perm) out.push_back(o.dimensions(p));
  return ArrayLike(o.element_type(), out);
}

StatusOr<Shape> InferReverse(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& o = inst.operand(0)->shape();
  for (int64_t d : inst.dimensions()) {
    if (!ValidDim(d, o.rank())) return Err("reverse dimension out of range");
  }
  return o;
}

StatusOr<Shape> InferSlice(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
  const Shape& o = inst.operand(0)->shape();
  if (static_cast<int64_t>(inst.slice_starts().size()) != o.rank()) {
    return Err(fmt::format("slice has {} dimensions, operand rank is {}",
                           inst.slice_starts().size(), o.rank()));
  }
  Dims out;
  for (int64_t i = 0; i < o.rank(); ++i) {
    const int64_t s = inst.slice_starts()[static_cast<size_t>(i)];
    const int64_t l = inst.slice_limits()[static_cast<size_t>(i)];
    const int64_t st = inst.slice_strides()[static_cast<size_t>(i)];
    if (s < 0 || l > o.dimensions(i) || s > l || st < 1) {
      return Err(fmt::format("slice [{}:{}:{}] is out of bounds for dimension {} of size {}", s, l,
                             st, i, o.dimensions(i)));
    }
    out.push_back((l - s + st - 1) / st);
  }
  return ArrayLike(o.element_type(), out);
}

StatusOr<Shape> InferDynamicSlice(const HloInstruction& inst) {
  const Shape& o = inst.operand(0)->shape();
  const Dims& sizes = inst.dynamic_slice_sizes();
  if (inst.operand_count() != 1 + o.rank() && inst.operand_count() != 2) {
    return Err(fmt::format("dynamic-slice expects 1 + {} operands", o.rank()));
  }
  if (static_cast<int64_t>(sizes.size()) != o.rank())
    return Err("dynamic_slice_sizes rank mismatch");
  for (int64_t i = 0; i < o.rank(); ++i) {
    if (sizes[static_cast<size_t>(i)] < 0 || sizes[static_cast<size_t>(i)] > o.dimensions(i)) {
      return Err(fmt::format("dynamic slice size {} exceeds dimension {} of size {}",
                             sizes[static_cast<size_t>(i)], i, o.dimensions(i)));
    }
  }
  return ArrayLike(o.element_type(), sizes);
}

StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& inst) {
  const Shape& o = inst.operand(0)->shape();
  if (inst.operand_count() < 2) return Err("dynamic-update-slice expects operand, update, indices");
  const Shape& u = inst.operand(1)->shape();
  if (u.rank() != o.rank()) return Err("update rank differs from the operand's");
  for (int64_t i = 0; i < o.rank(); ++i) {
    if (u.dimensions(i) > o.dimensions(i)) {
      return Err(fmt::format("update dimension {} ({}) exceeds the operand's ({})", i,
                             u.dimensions(i), o.dimensions(i)));
    }
  }
  return o;
}

StatusOr<Shape> InferConcatenate(const HloInstruction& inst) {
  if (inst.operand_count() < 1 || inst.dimensions().size() != 1) {
    return Err("concatenate needs operands and dimensions={d}");
  }
  const Shape& first = inst.operand(0)->shape();
  const int64_t d = inst.dimensions(0);
  if (!ValidDim(d, first.rank())) return Err("concatenate dimension out of range");
  Dims out = first.dimensions();
  for (int64_t k = 1; k < inst.operand_count(); ++k) {
    const Shape& s = inst.operand(k)->shape();
    if (s.rank() != first.rank()) return Err("concatenate operands differ in rank");
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i != d && s.dimensions(i) != first.dimensions(i)) {
        return Err(fmt::format("concatenate operand {} differs in dimension {}", k, i));
      }
    }
    out[static_cast<size_t>(d)] += s.dimensions(d);
  }
  return ArrayLike(first.element_type(), out);
}

StatusOr<Shape> InferPad(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 2));
  const Shape& o = inst.operand(0)->shape();
  const auto& p = inst.padding_config().dimensions;
  if (static_cast<int64_t>(p.size()) != o.rank()) {
    return Err(fmt::format("padding has {} dimensions, operand rank is {}", p.size(), o.rank()));
  }
  if (inst.operand(1)->shape().rank() != 0) return Err("padding value must be a scalar");
  Dims out;
  for (int64_t i = 0; i < o.rank(); ++i) {
    const PaddingDimension& pd = p[static_cast<size_t>(i)];
    const int64_t n = o.dimensions(i);
    const int64_t size = pd.edge_padding_low + pd.edge_padding_high + n +
                         std::max<int64_t>(n - 1, 0) * pd.interior_padding;
    if (size < 0) return Err(fmt::format("padding makes dimension {} negative", i));
    out.push_back(size);
  }
  return ArrayLike(o.element_type(), out);
}

// The source has the shape reduce-window would produce from the operand with this window.
StatusOr<Shape> InferSelectAndScatter(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 3));
  const Shape& o = inst.operand(0)->shape();
  if (static_cast<int64_t>(inst.window().dimensions.size()) != o.rank()) {
    return Err("select-and-scatter window rank differs from the operand's");
  }
  Dims expect;
  for (int64_t i = 0; i < o.rank(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t d, WindowedDim(o.dimensions(i), inst.window().dimensions[static_cast<size_t>(i)]));
    expect.push_back(d);
  }
  const Shape& source = inst.operand(1)->shape();
  if (source.dimensions() != expect) {
    return Err(fmt::format("select-and-scatter source is {} but the window gives {}",
                           source.ToString(false), DimsStr(expect)));
  }
  return o;
}

// Each of `dims` in [0, bound), and (when `sorted`) strictly increasing, else without repeats;
// `op` ("gather", "scatter") and `what` (the attribute) name it in the error.
Status CheckDimList(const Dims& dims, int64_t bound, bool sorted, const char* op,
                    const char* what) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!ValidDim(dims[i], bound)) {
      return Err(fmt::format("{}: {} {}: dimension {} is not in [0, {})", op, what, DimsStr(dims),
                             dims[i], bound));
    }
    const bool repeated = std::find(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(i),
                                    dims[i]) != dims.begin() + static_cast<std::ptrdiff_t>(i);
    if (repeated || (sorted && i > 0 && dims[i] < dims[i - 1])) {
      return Err(fmt::format("{}: {} {} must be {}without repeats", op, what, DimsStr(dims),
                             sorted ? "sorted and " : ""));
    }
  }
  return OkStatus();
}

// The first dimension `a` and `b` share, if any.
std::optional<int64_t> SharedDim(const Dims& a, const Dims& b) {
  for (int64_t d : a) {
    if (std::find(b.begin(), b.end(), d) != b.end()) return d;
  }
  return std::nullopt;
}

// As XLA's ValidateGatherDimensionNumbers and InferGatherShape (shape_inference.cc), with the
// batching dimensions of StableHLO's gather (spec.md, constraints C1-C21): integer indices;
// index_vector_dim in [0, rank(indices)]; offset_dims sorted, without repeats, in [0, result
// rank); collapsed_slice_dims and operand_batching_dims sorted, without repeats, in the operand's
// rank, disjoint, their slice sizes at most 1; start_indices_batching_dims without repeats, in the
// indices' rank, not index_vector_dim, as many as operand_batching_dims and of the same sizes;
// start_index_map one operand dimension per index-vector element, without repeats, disjoint from
// operand_batching_dims; one slice size per operand dimension, in [0, its size]; and offset_dims +
// collapsed_slice_dims + operand_batching_dims covering the operand's rank.
Status CheckGatherDimensions(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  const GatherDimensionNumbers& g = inst.gather_dimension_numbers();
  const Dims& sizes = inst.gather_slice_sizes();
  TPUSIM_RETURN_IF_ERROR(ExpectArray(operand, "gather operand"));
  TPUSIM_RETURN_IF_ERROR(ExpectArray(indices, "gather indices"));
  if (!IsInteger(indices.element_type())) {
    return Err(
        fmt::format("gather: the indices must be integers, got {}", indices.ToString(false)));
  }
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices.rank()) {
    return Err(fmt::format("gather: index_vector_dim={} is not in [0, {}]", g.index_vector_dim,
                           indices.rank()));
  }
  const bool vector_dim_in_indices = g.index_vector_dim < indices.rank();
  const int64_t batch_rank = indices.rank() - (vector_dim_in_indices ? 1 : 0);
  const int64_t result_rank = static_cast<int64_t>(g.offset_dims.size()) + batch_rank;
  TPUSIM_RETURN_IF_ERROR(CheckDimList(g.offset_dims, result_rank, true, "gather", "offset_dims"));
  TPUSIM_RETURN_IF_ERROR(
      CheckDimList(g.collapsed_slice_dims, operand.rank(), true, "gather", "collapsed_slice_dims"));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(g.operand_batching_dims, operand.rank(), true, "gather",
                                      "operand_batching_dims"));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(g.start_indices_batching_dims, indices.rank(), false,
                                      "gather", "start_indices_batching_dims"));
  TPUSIM_RETURN_IF_ERROR(
      CheckDimList(g.start_index_map, operand.rank(), false, "gather", "start_index_map"));
  if (std::optional<int64_t> d = SharedDim(g.collapsed_slice_dims, g.operand_batching_dims)) {
    return Err(fmt::format("gather: operand dimension {} is both collapsed and a batching "
                           "dimension", *d));
  }
  if (std::optional<int64_t> d = SharedDim(g.start_index_map, g.operand_batching_dims)) {
    return Err(fmt::format("gather: operand dimension {} is both in start_index_map and a "
                           "batching dimension", *d));
  }
  if (std::find(g.start_indices_batching_dims.begin(), g.start_indices_batching_dims.end(),
                g.index_vector_dim) != g.start_indices_batching_dims.end()) {
    return Err(fmt::format("gather: index_vector_dim={} is also in start_indices_batching_dims",
                           g.index_vector_dim));
  }
  if (g.operand_batching_dims.size() != g.start_indices_batching_dims.size()) {
    return Err(fmt::format("gather: {} operand_batching_dims but {} start_indices_batching_dims",
                           g.operand_batching_dims.size(), g.start_indices_batching_dims.size()));
  }
  for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) {
    const int64_t o = operand.dimensions(g.operand_batching_dims[i]);
    const int64_t n = indices.dimensions(g.start_indices_batching_dims[i]);
    if (o != n) {
      return Err(fmt::format("gather: batching dimension {} of the operand has size {}, dimension "
                             "{} of the indices {}",
                             g.operand_batching_dims[i], o, g.start_indices_batching_dims[i], n));
    }
  }
  const int64_t index_vector = vector_dim_in_indices ? indices.dimensions(g.index_vector_dim) : 1;
  if (static_cast<int64_t>(g.start_index_map.size()) != index_vector) {
    return Err(fmt::format("gather: start_index_map has {} entries, the index vector {}",
                           g.start_index_map.size(), index_vector));
  }
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return Err(fmt::format("gather: slice_sizes has {} entries, operand rank is {}", sizes.size(),
                           operand.rank()));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = sizes[static_cast<size_t>(i)];
    if (size < 0 || size > operand.dimensions(i)) {
      return Err(fmt::format("gather: slice size {} of dimension {} is not in [0, {}]", size, i,
                             operand.dimensions(i)));
    }
  }
  for (const auto& [list, what] : {std::pair{&g.collapsed_slice_dims, "collapsed_slice_dims"},
                                   std::pair{&g.operand_batching_dims, "operand_batching_dims"}}) {
    for (int64_t d : *list) {
      if (sizes[static_cast<size_t>(d)] > 1) {
        return Err(fmt::format("gather: dimension {} is in {} but its slice size is {} (at most 1)",
                               d, what, sizes[static_cast<size_t>(d)]));
      }
    }
  }
  const size_t covered =
      g.offset_dims.size() + g.collapsed_slice_dims.size() + g.operand_batching_dims.size();
  if (static_cast<int64_t>(covered) != operand.rank()) {
    return Err(fmt::format("gather: offset_dims, collapsed_slice_dims and operand_batching_dims "
                           "have {} dimensions, the operand's rank is {}",
                           covered, operand.rank()));
  }
  return OkStatus();
}

// gather(operand, indices): the indices' dimensions but index_vector_dim (the batch), with the
// slice's uncollapsed, unbatched sizes placed at offset_dims.
StatusOr<Shape> InferGather(const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 2));
  TPUSIM_RETURN_IF_ERROR(CheckGatherDimensions(inst));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  const GatherDimensionNumbers& g = inst.gather_dimension_numbers();
  const Dims& sizes = inst.gather_slice_sizes();
  Dims batch;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != g.index_vector_dim) batch.push_back(indices.dimensions(i));
  }
  Dims offsets;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const bool dropped = std::find(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end(),
                                   i) != g.collapsed_slice_dims.end() ||
                         std::find(g.operand_batching_dims.begin(), g.operand_batching_dims.end(),
                                   i) != g.operand_batching_dims.end();
    if (!dropped) offsets.push_back(sizes[static_cast<size_t>(i)]);
  }
  // offset_dims is sorted, without repeats and in range (CheckGatherDimensions).
  Dims out;
  size_t oi = 0;
  size_t bi = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(batch.size() + offsets.size()); ++i) {
    const bool offset = oi < g.offset_dims.size() && g.offset_dims[oi] == i;
    out.push_back(offset ? offsets[oi++] : batch[bi++]);
  }
  return ArrayLike(operand.element_type(), out);
}

// The batching dimensions of scatter, as StableHLO's scatter constraints C9, C12-C18 and C20 and
// XLA's ValidateScatterDimensionNumbers: input_batching_dims sorted (range and repeats are checked
// with the other lists), disjoint from inserted_window_dims and scatter_dims_to_operand_dims;
// scatter_indices_batching_dims without repeats, in the indices' rank, not index_vector_dim, as
// many as input_batching_dims and of the same sizes.
Status CheckScatterBatchingDims(const ScatterDimensionNumbers& s, const Shape& operand,
                                const Shape& indices) {
  TPUSIM_RETURN_IF_ERROR(
      CheckDimList(s.input_batching_dims, operand.rank(), true, "scatter",
                   "input_batching_dims"));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(s.scatter_indices_batching_dims, indices.rank(), false,
                                      "scatter", "scatter_indices_batching_dims"));
  if (std::optional<int64_t> d = SharedDim(s.inserted_window_dims, s.input_batching_dims)) {
    return Err(fmt::format("scatter: dimension {} is both inserted and a batching dimension", *d));
  }
  if (std::optional<int64_t> d =
          SharedDim(s.scatter_dims_to_operand_dims, s.input_batching_dims)) {
    return Err(fmt::format("scatter: operand dimension {} is both in scatter_dims_to_operand_dims "
                           "and a batching dimension",
                           *d));
  }
  if (std::find(s.scatter_indices_batching_dims.begin(), s.scatter_indices_batching_dims.end(),
                s.index_vector_dim) != s.scatter_indices_batching_dims.end()) {
    return Err(fmt::format("scatter: index_vector_dim={} is also in scatter_indices_batching_dims",
                           s.index_vector_dim));
  }
  if (s.input_batching_dims.size() != s.scatter_indices_batching_dims.size()) {
    return Err(fmt::format("scatter: {} input_batching_dims but {} scatter_indices_batching_dims",
                           s.input_batching_dims.size(), s.scatter_indices_batching_dims.size()));
  }
  for (size_t i = 0; i < s.input_batching_dims.size(); ++i) {
    const int64_t o = operand.dimensions(s.input_batching_dims[i]);
    const int64_t n = indices.dimensions(s.scatter_indices_batching_dims[i]);
    if (o != n) {
      return Err(fmt::format("scatter: batching dimension {} of the operand has size {}, "
                             "dimension {} of the indices {}",
                             s.input_batching_dims[i], o, s.scatter_indices_batching_dims[i], n));
    }
  }
  return OkStatus();
}

// As XLA's ValidateScatterDimensionNumbers (shape_inference.cc): integer indices, the dimension
// lists are in range, update_window_dims and inserted_window_dims sorted, none has a repeat, the
// batching dimensions as CheckScatterBatchingDims, and the window dimensions (update_window_dims +
// inserted_window_dims + input_batching_dims) are the operand's rank; the updates' rank is the
// window's plus the indices' scatter dimensions.
Status CheckScatterDimensions(const HloInstruction& inst, int64_t n) {
  const ScatterDimensionNumbers& s = inst.scatter_dimension_numbers();
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(n)->shape();
  const Shape& updates = inst.operand(n + 1)->shape();
  for (int64_t i = 0; i < n; ++i) {
    TPUSIM_RETURN_IF_ERROR(ExpectArray(inst.operand(i)->shape(), "scatter operand"));
    TPUSIM_RETURN_IF_ERROR(ExpectArray(inst.operand(n + 1 + i)->shape(), "scatter update"));
    if (inst.operand(i)->shape().dimensions() != operand.dimensions() ||
        inst.operand(n + 1 + i)->shape().dimensions() != updates.dimensions()) {
      return Err("scatter: the operands, and the updates, must have the same dimensions");
    }
  }
  TPUSIM_RETURN_IF_ERROR(ExpectArray(indices, "scatter indices"));
  if (!IsInteger(indices.element_type())) {
    return Err(
        fmt::format("scatter: the indices must be integers, got {}", indices.ToString(false)));
  }
  if (s.index_vector_dim < 0 || s.index_vector_dim > indices.rank()) {
    return Err(fmt::format("scatter: index_vector_dim={} is not in [0, {}]", s.index_vector_dim,
                           indices.rank()));
  }
  TPUSIM_RETURN_IF_ERROR(
      CheckDimList(s.update_window_dims, updates.rank(), true, "scatter", "update_window_dims"));
  TPUSIM_RETURN_IF_ERROR(
      CheckDimList(s.inserted_window_dims, operand.rank(), true, "scatter",
                   "inserted_window_dims"));
  TPUSIM_RETURN_IF_ERROR(CheckDimList(s.scatter_dims_to_operand_dims, operand.rank(), false,
                                      "scatter", "scatter_dims_to_operand_dims"));
  TPUSIM_RETURN_IF_ERROR(CheckScatterBatchingDims(s, operand, indices));
  const size_t window =
      s.update_window_dims.size() + s.inserted_window_dims.size() + s.input_batching_dims.size();
  if (static_cast<int64_t>(window) != operand.rank()) {
    return Err(fmt::format(
        "scatter: update_window_dims, inserted_window_dims and input_batching_dims have {} "
        "dimensions, the operand's rank is {}",
        window, operand.rank()));
  }
  const int64_t index_vector =
      s.index_vector_dim < indices.rank() ? indices.dimensions(s.index_vector_dim) : 1;
  if (static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()) != index_vector) {
    return Err(
        fmt::format("scatter: scatter_dims_to_operand_dims has {} entries, the index vector {}",
                    s.scatter_dims_to_operand_dims.size(), index_vector));
  }
  const int64_t scatter_dims = indices.rank() - (s.index_vector_dim < indices.rank() ? 1 : 0);
  if (updates.rank() != static_cast<int64_t>(s.update_window_dims.size()) + scatter_dims) {
    return Err(
        fmt::format("scatter: updates of rank {}, expected {} window + {} scatter dimensions",
                    updates.rank(), s.update_window_dims.size(), scatter_dims));
  }
  return OkStatus();
}

// scatter(operands..., indices, updates...): result = the operands.
StatusOr<Shape> InferScatter(const HloInstruction& inst) {
  if (inst.operand_count() < 3 || inst.operand_count() % 2 == 0) {
    return Err("scatter expects N operands, indices, N updates");
  }
  const int64_t n = (inst.operand_count() - 1) / 2;
  TPUSIM_RETURN_IF_ERROR(CheckScatterDimensions(inst, n));
  if (n == 1) return inst.operand(0)->shape();
  std::vector<Shape> elems;
  for (int64_t i = 0; i < n; ++i) elems.push_back(inst.operand(i)->shape());
  return Shape::Tuple(std::move(elems));
}

StatusOr<Shape> InferSort(const HloInstruction& inst) {
  if (inst.operand_count() < 1) return Err("sort expects operands");
  const Shape& first = inst.operand(0)->shape();
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    if (inst.operand(i)->shape().dimensions() != first.dimensions())
      return Err("sort operands differ in dimensions");
  }
  if (inst.dimensions().size() != 1 || !ValidDim(inst.dimensions(0), first.rank())) {
    return Err("sort needs dimensions={d} within the operand rank");
  }
  if (inst.operand_count() == 1) return first;
  std::vector<Shape> elems;
  for (const HloInstruction* o : inst.operands()) elems.push_back(o->shape());
  return Shape::Tuple(std::move(elems));
}

StatusOr<Shape> InferMap(const HloInstruction& inst) {
  if (inst.operand_count() < 1 || inst.to_apply() == nullptr)
    return Err("map needs operands and to_apply");
  const HloInstruction* root = inst.to_apply()->root_instruction();
  return ArrayLike(root->shape().element_type(), inst.operand(0)->shape().dimensions());
}

// As XLA's InferBatchNorm*Shape: training takes (operand, scale, offset); inference (operand,
// scale, offset, mean, variance); grad (operand, scale, mean, variance, grad_output). Every
// per-feature operand is rank 1 with the feature dimension's size and a floating-point type (XLA:
// same element type ignoring FP precision); grad_output has the operand's dimensions.
StatusOr<Shape> InferBatchNorm(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  const Shape& o = operand(0);
  const int64_t want = op == HloOpcode::kBatchNormTraining ? 3 : 5;
  if (inst.operand_count() != want) {
    return Err(fmt::format("{} takes {} operands, got {}", HloOpcodeString(op), want,
                           inst.operand_count()));
  }
  if (!o.IsArray()) return Err("batch-norm operand must be an array");
  if (!ValidDim(inst.feature_index(), o.rank())) return Err("feature_index out of range");
  const int64_t features = o.dimensions(inst.feature_index());
  const int64_t per_feature = op == HloOpcode::kBatchNormGrad ? 4 : want;
  for (int64_t k = 1; k < per_feature; ++k) {
    const Shape& f = operand(k);
    if (!f.IsArray() || f.rank() != 1 || f.dimensions(0) != features ||
        IsFloatingPoint(f.element_type()) != IsFloatingPoint(o.element_type())) {
      return Err(
          fmt::format("operand {} is {} but the operand's feature dimension {} needs "
                      "a floating-point [{}]",
                      k, f.ToString(false), inst.feature_index(), features));
    }
  }
  if (op == HloOpcode::kBatchNormGrad &&
      !(operand(4).IsArray() && operand(4).dimensions() == o.dimensions())) {
    return Err(fmt::format("grad_output is {} but the operand is {}", operand(4).ToString(false),
                           o.ToString(false)));
  }
  if (op == HloOpcode::kBatchNormInference) return o;
  const Shape f = ArrayLike(o.element_type(), {o.dimensions(inst.feature_index())});
  return Shape::Tuple({o, f, f});
}

// while, call, fusion, conditional: the shape of the called computation's root.
StatusOr<Shape> InferControlFlow(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kWhile) {
    TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
    if (inst.while_body() != nullptr && inst.while_body()->root_instruction() != nullptr) {
      return inst.while_body()->root_instruction()->shape();
    }
    return inst.operand(0)->shape();
  }
  if (op == HloOpcode::kConditional) {
    if (inst.branch_computations().empty() || inst.branch_computations()[0] == nullptr) {
      return Err("conditional has no branches");
    }
    return inst.branch_computations()[0]->root_instruction()->shape();
  }
  const HloComputation* c =
      op == HloOpcode::kCall && inst.to_apply() ? inst.to_apply() : inst.called_computation();
  if (c == nullptr || c->root_instruction() == nullptr) return Err("needs exactly one callee");
  return c->root_instruction()->shape();
}

// The shape of a parameter, constant, iota, id, token or tuple instruction, and of the ops that
// return their (first) operand's.
StatusOr<Shape> InferStructural(const HloInstruction& inst) {
  const Shape& declared = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kIota:
      TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 0));
      if (!declared.IsArray() || !ValidDim(inst.iota_dimension(), declared.rank())) {
        return Err(fmt::format("iota_dimension {} is out of range for {}", inst.iota_dimension(),
                               declared.ToString(false)));
      }
      return declared;
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 0));
      return Shape::Scalar(PrimitiveType::kU32);
    case HloOpcode::kAfterAll:
      return Shape::Token();
    case HloOpcode::kAddDependency:
      TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 2));
      return inst.operand(0)->shape();
    case HloOpcode::kTuple: {
      std::vector<Shape> elems;
      for (const HloInstruction* o : inst.operands()) elems.push_back(o->shape());
      return Shape::Tuple(std::move(elems));
    }
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kAllReduceDone:
      TPUSIM_RETURN_IF_ERROR(ExpectOperands(inst, 1));
      return inst.operand(0)->shape();
    default:  // parameter, constant: as declared
      return declared;
  }
}

// The inferring function of each opcode that has one (InferShape's dispatch), or nullptr.
using ShapeRule = StatusOr<Shape> (*)(const HloInstruction&);

ShapeRule ShapeRuleFor(HloOpcode op) {
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kTuple:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kAllReduceDone:
      return InferStructural;
    case HloOpcode::kGetTupleElement:
      return InferGetTupleElement;
    case HloOpcode::kCopyDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAsyncDone:
      return InferAsyncDone;
    case HloOpcode::kAsyncUpdate:
      return InferAsyncUpdate;
    case HloOpcode::kTopK:
      return InferTopK;
    case HloOpcode::kBroadcast:
      return InferBroadcast;
    case HloOpcode::kReshape:
      return InferReshape;
    case HloOpcode::kTranspose:
      return InferTranspose;
    case HloOpcode::kReverse:
      return InferReverse;
    case HloOpcode::kSlice:
      return InferSlice;
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice;
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice;
    case HloOpcode::kConcatenate:
      return InferConcatenate;
    case HloOpcode::kPad:
      return InferPad;
    case HloOpcode::kReduce:
      return InferReduce;
    case HloOpcode::kReduceWindow:
      return InferReduceWindow;
    case HloOpcode::kSelectAndScatter:
      return InferSelectAndScatter;
    case HloOpcode::kDot:
      return [](const HloInstruction& inst) { return InferDot(inst, inst.shape()); };
    case HloOpcode::kConvolution:
      return [](const HloInstruction& inst) { return InferConvolution(inst, inst.shape()); };
    case HloOpcode::kGather:
      return InferGather;
    case HloOpcode::kFft:
      return InferFft;
    case HloOpcode::kScatter:
      return InferScatter;
    case HloOpcode::kSort:
      return InferSort;
    case HloOpcode::kMap:
      return InferMap;
    case HloOpcode::kBitcast:
      return InferBitcast;
    case HloOpcode::kBitcastConvert:
      return InferBitcastConvert;
    case HloOpcode::kDynamicReshape:
      return InferDynamicReshape;
    case HloOpcode::kCholesky:
      return InferCholesky;
    case HloOpcode::kTriangularSolve:
      return InferTriangularSolve;
    case HloOpcode::kGetDimensionSize:
      return InferGetDimensionSize;
    case HloOpcode::kSetDimensionSize:
      return InferSetDimensionSize;
    case HloOpcode::kRaggedAllToAll:
      return InferRaggedAllToAll;
    case HloOpcode::kRaggedDot:
      return InferRaggedDot;
    case HloOpcode::kRngBitGenerator:
      return InferRngBitGenerator;
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
      return InferBatchNorm;
    case HloOpcode::kWhile:
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
    case HloOpcode::kConditional:
      return InferControlFlow;
    default:
      return nullptr;
  }
}

}  // namespace

StatusOr<std::optional<Shape>> InferShape(const HloInstruction& inst, int64_t num_devices) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kBitcastConvert) TPUSIM_RETURN_IF_ERROR(CheckComplexElementTypes(inst));
  if (!HasShapeInference(op)) return std::optional<Shape>();
  if (IsElementwise(op)) {
    TPUSIM_ASSIGN_OR_RETURN(Shape s, InferElementwise(inst, inst.shape()));
    return std::optional<Shape>(std::move(s));
  }
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
      return InferReplicaGroupCollective(inst, num_devices);
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCopyStart: {
      TPUSIM_ASSIGN_OR_RETURN(Shape s, InferAsyncStart(inst, GroupSize(inst, num_devices)));
      return std::optional<Shape>(std::move(s));
    }
    default:
      break;
  }
  const ShapeRule rule = ShapeRuleFor(op);
  if (rule == nullptr) return std::optional<Shape>();
  TPUSIM_ASSIGN_OR_RETURN(Shape s, rule(inst));
  return std::optional<Shape>(std::move(s));
}

}  // namespace tpusim::hlo
