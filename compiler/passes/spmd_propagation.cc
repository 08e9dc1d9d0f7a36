#include "compiler/passes/spmd_propagation.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/diagnostic.h"
#include "compiler/passes/spmd_manual.h"

namespace tpusim::compiler::spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

std::string Where(const hlo::HloModule& module, const HloInstruction& inst) {
  return FormatDiagnostic(
      module.source_name(), "", inst.location(),
      fmt::format("%{} ({})", inst.name(), hlo::HloOpcodeString(inst.opcode())));
}

std::vector<int64_t> Complement(int64_t rank, const std::vector<int64_t>& a,
                                const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end())
      out.push_back(d);
  }
  return out;
}

const std::vector<int64_t>& Dims(const HloInstruction* inst) { return inst->shape().dimensions(); }

// A tiling is usable for `inst` if its rank matches and it cuts the dimensions evenly.
std::optional<Tiling> Usable(const HloInstruction& inst, std::optional<Tiling> t) {
  if (!t || !inst.shape().IsArray() || !DividesEvenly(Dims(&inst), *t)) return std::nullopt;
  return t;
}

double Bytes(const HloInstruction* inst) { return static_cast<double>(inst->shape().ByteSize()); }

// The dot's tiling candidates, in preference order for ties.
std::vector<Tiling> DotCandidates(const HloInstruction& dot, const DotAxes& ax,
                                  const std::optional<Tiling>& lhs,
                                  const std::optional<Tiling>& rhs,
                                  const std::optional<Tiling>& out, int64_t n) {
  std::vector<Tiling> c;
  auto from = [&](const std::vector<const Tiling*>& src,
                  const std::vector<const std::vector<int64_t>*>& axes) -> std::optional<Tiling> {
    std::vector<int64_t> t(static_cast<size_t>(ax.rank), 1);
    std::vector<std::vector<int64_t>> index(static_cast<size_t>(n),
                                            std::vector<int64_t>(static_cast<size_t>(ax.rank), 0));
    std::vector<bool> set(static_cast<size_t>(ax.rank), false);
    for (size_t s = 0; s < src.size(); ++s) {
      const Tiling& st = *src[s];
      const std::vector<int64_t>& map = *axes[s];
      const auto st_index = st.Indices();
      for (size_t d = 0; d < map.size(); ++d) {
        if (map[d] < 0) continue;  // a dimension the contraction never cuts
        const auto a = static_cast<size_t>(map[d]);
        if (set[a] && t[a] != st.tiles[d]) return std::nullopt;
        for (int64_t p = 0; p < n; ++p) {
          const int64_t i = st_index[static_cast<size_t>(p)][d];
          if (set[a] && index[static_cast<size_t>(p)][a] != i) return std::nullopt;
          index[static_cast<size_t>(p)][a] = i;
        }
        t[a] = st.tiles[d];
        set[a] = true;
      }
    }
    return TilingFromIndices(t, index);
  };
  if (lhs && rhs) {
    if (auto t = from({&*lhs, &*rhs}, {&ax.lhs, &ax.rhs})) c.push_back(*t);
  }
  if (out) {
    if (auto t = from({&*out}, {&ax.out})) c.push_back(*t);
  }
  if (lhs) {
    if (auto t = from({&*lhs}, {&ax.lhs})) c.push_back(*t);
  }
  if (rhs) {
    if (auto t = from({&*rhs}, {&ax.rhs})) c.push_back(*t);
  }
  c.push_back(Tiling::Replicated(ax.rank, n));
  // Keep candidates that cut every operand and the result evenly.
  std::vector<Tiling> ok;
  for (Tiling& t : c) {
    if (DividesEvenly(Dims(dot.operand(0)), Remap(t, ax.lhs)) &&
        DividesEvenly(Dims(dot.operand(1)), Remap(t, ax.rhs)) &&
        DividesEvenly(Dims(&dot), Remap(t, ax.out))) {
      ok.push_back(std::move(t));
    }
  }
  return ok;
}

// The reducer's combining opcode if it is `op(param0, param1)`, else nullopt.
std::optional<HloOpcode> ReducerOpcode(const HloInstruction& reduce) {
  const hlo::HloComputation* c = reduce.to_apply();
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const HloInstruction* root = c->root_instruction();
  if (root == nullptr || root->operand_count() != 2) return std::nullopt;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter || a == b) {
    return std::nullopt;
  }
  return root->opcode();
}

// True if a window dimension takes one element at stride 1 with no padding or dilation: output
// element i reads operand element i only.
bool IsTrivialWindow(const hlo::WindowDimension& w) {
  return w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 &&
         w.base_dilation == 1 && w.window_dilation == 1;
}

// How many leading operands of a ChangedDims op are arrays cut like its result (the rest — pad's
// padding value, reduce-window's and select-and-scatter's init value, dynamic-slice's start
// indices — are whole on every partition).
int64_t CutOperandCount(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kPad:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kDynamicSlice:
      return 1;
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kDynamicUpdateSlice:
      return 2;
    default:
      return inst.operand_count();
  }
}

// Dimensions slice / pad / concatenate / reverse change (so they must be whole on every partition);
// nullopt for other opcodes.
std::optional<std::vector<int64_t>> ChangedDims(const HloInstruction& inst) {
  std::vector<int64_t> d;
  switch (inst.opcode()) {
    case HloOpcode::kSlice: {
      const auto& in = inst.operand(0)->shape().dimensions();
      for (size_t i = 0; i < in.size() && i < inst.slice_starts().size(); ++i) {
        if (inst.slice_starts()[i] != 0 || inst.slice_limits()[i] != in[i] ||
            inst.slice_strides()[i] != 1) {
          d.push_back(static_cast<int64_t>(i));
        }
      }
      return d;
    }
    case HloOpcode::kPad: {
      const auto& pd = inst.padding_config().dimensions;
      for (size_t i = 0; i < pd.size(); ++i) {
        if (pd[i].edge_padding_low != 0 || pd[i].edge_padding_high != 0 ||
            pd[i].interior_padding != 0) {
          d.push_back(static_cast<int64_t>(i));
        }
      }
      return d;
    }
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
      return inst.dimensions();
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: {
      // A dimension taken (or updated) whole: its start index is clamped to 0, so it may stay cut.
      const HloInstruction* data = inst.operand(0);
      if (!data->shape().IsArray()) return std::nullopt;
      const std::vector<int64_t>& taken = inst.opcode() == HloOpcode::kDynamicSlice
                                              ? inst.dynamic_slice_sizes()
                                              : inst.operand(1)->shape().dimensions();
      for (int64_t i = 0; i < data->shape().rank(); ++i) {
        const auto u = static_cast<size_t>(i);
        if (u >= taken.size() || taken[u] != data->shape().dimensions(i)) d.push_back(i);
      }
      return d;
    }
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter: {
      // A dimension whose window is one element, stride 1, no padding or dilation maps element i
      // of the operand to element i of the result: it may stay cut. The others are windowed.
      if (inst.opcode() == HloOpcode::kReduceWindow && inst.operand_count() != 2)
        return std::nullopt;
      const auto& wd = inst.window().dimensions;
      for (size_t i = 0; i < wd.size(); ++i) {
        if (!IsTrivialWindow(wd[i])) d.push_back(static_cast<int64_t>(i));
      }
      return d;
    }
    default:
      return std::nullopt;
  }
}

class Propagator {
 public:
  explicit Propagator(const hlo::HloModule& module)
      : module_(module), comp_(*module.entry_computation()), n_(module.num_partitions()) {}

  StatusOr<Assignment> Run() {
    TPUSIM_ASSIGN_OR_RETURN(a_.manual, ManualRegion(module_));
    TPUSIM_RETURN_IF_ERROR(ReadAnnotations());
    for (int iter = 0; iter < 8; ++iter) {
      bool changed = false;
      for (const auto& up : comp_.instructions()) changed |= Assign(*up, FromOperands(*up), true);
      for (auto it = comp_.instructions().rbegin(); it != comp_.instructions().rend(); ++it) {
        changed |= Assign(**it, FromUsers(**it), true);
      }
      if (!changed) break;
    }
    for (const auto& up : comp_.instructions()) {
      const HloInstruction& inst = *up;
      if (!inst.shape().IsArray()) {
        if (inst.opcode() == HloOpcode::kTuple && !a_.tuple.count(&inst)) {
          std::vector<Tiling> elements;
          for (const HloInstruction* op : inst.operands()) elements.push_back(Get(op));
          a_.tuple[&inst] = std::move(elements);
        }
        continue;
      }
      if (!Assign(inst, FromOperands(inst), false)) {
        if (!a_.array.count(&inst)) a_.array[&inst] = Tiling::Replicated(inst.shape().rank(), n_);
      }
    }
    return std::move(a_);
  }

 private:
  Status ReadAnnotations() {
    for (const auto& up : comp_.instructions()) {
      const HloInstruction& inst = *up;
      if (a_.manual.count(&inst)) {
        // Written per device and left as it is: whole, as far as the partitioner is concerned.
        if (inst.shape().IsArray()) a_.array[&inst] = Tiling::Replicated(inst.shape().rank(), n_);
        continue;
      }
      if (!inst.sharding().has_value()) continue;
      const hlo::HloSharding& s = *inst.sharding();
      if (inst.shape().IsArray()) {
        auto t = TilingFromSharding(s, inst.shape().rank(), n_);
        if (!t.ok())
          return Status(t.status().code(), Where(module_, inst) + ": " + t.status().message());
        TPUSIM_RETURN_IF_ERROR(CheckEven(inst, *t));
        a_.array[&inst] = *t;
        continue;
      }
      // Tuple-shaped: a kTuple of arrays may carry one sharding per element; any other tuple value
      // must be unsplit.
      std::vector<const hlo::HloSharding*> elems;
      if (s.kind == hlo::HloSharding::Kind::kTuple) {
        for (const auto& e : s.tuple_elements) elems.push_back(&e);
      }
      const bool flat_tuple = inst.opcode() == HloOpcode::kTuple &&
                              static_cast<int64_t>(elems.size()) == inst.operand_count();
      if (flat_tuple) {
        std::vector<Tiling> tilings;
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          const HloInstruction* op = inst.operand(i);
          if (!op->shape().IsArray()) return Unsplittable(inst, s);
          auto t = TilingFromSharding(*elems[static_cast<size_t>(i)], op->shape().rank(), n_);
          if (!t.ok())
            return Status(t.status().code(), Where(module_, inst) + ": " + t.status().message());
          TPUSIM_RETURN_IF_ERROR(CheckEven(*op, *t));
          tilings.push_back(*t);
        }
        a_.tuple[&inst] = std::move(tilings);
        continue;
      }
      bool splits =
          s.kind == hlo::HloSharding::Kind::kTiled || s.kind == hlo::HloSharding::Kind::kManual;
      for (const auto* e : elems) {
        splits |=
            e->kind == hlo::HloSharding::Kind::kTiled || e->kind == hlo::HloSharding::Kind::kManual;
      }
      if (splits) return Unsplittable(inst, s);
    }
    return OkStatus();
  }

  Status Unsplittable(const HloInstruction& inst, const hlo::HloSharding& s) {
    return Unimplemented(fmt::format(
        "{}: sharding={} splits a tuple-shaped value; tpusim's SPMD partitioner splits arrays and "
        "flat tuple(...) results only",
        Where(module_, inst), s.ToString()));
  }

  Status CheckEven(const HloInstruction& inst, const Tiling& t) {
    for (int64_t d = 0; d < inst.shape().rank(); ++d) {
      const int64_t size = inst.shape().dimensions(d);
      const int64_t k = t.tiles[static_cast<size_t>(d)];
      if (size % k != 0) {
        return Unimplemented(fmt::format(
            "{}: sharding={} cuts dimension {} of size {} into {} uneven tiles; tpusim's SPMD "
            "partitioner needs even cuts (XLA pads the last tile)",
            Where(module_, inst), t.ToString(), d, size, k));
      }
    }
    return OkStatus();
  }

  std::optional<Tiling> Find(const HloInstruction* inst) const {
    auto it = a_.array.find(inst);
    if (it == a_.array.end()) return std::nullopt;
    return it->second;
  }
  Tiling Get(const HloInstruction* inst) const {
    if (auto t = Find(inst)) return *t;
    return Tiling::Replicated(inst->shape().IsArray() ? inst->shape().rank() : 0, n_);
  }

  // Assigns `t` to an unassigned array instruction; with `split_only`, only a tiling that splits.
  bool Assign(const HloInstruction& inst, std::optional<Tiling> t, bool split_only) {
    if (!inst.shape().IsArray() || a_.array.count(&inst)) return false;
    t = Usable(inst, std::move(t));
    if (!t || (split_only && t->IsReplicated())) return false;
    a_.array[&inst] = *t;
    return true;
  }

  // The tiling the operands imply for `inst`, if any.
  std::optional<Tiling> FromOperands(const HloInstruction& inst) const {
    if (!inst.shape().IsArray()) return std::nullopt;
    if (KeepsTiling(inst)) {
      std::optional<Tiling> best;
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().IsArray() || Dims(op) != Dims(&inst)) continue;
        auto t = Find(op);
        if (t && (!best || t->num_tiles() > best->num_tiles())) best = t;
      }
      return best;
    }
    switch (inst.opcode()) {
      case HloOpcode::kBroadcast: {
        auto t = Find(inst.operand(0));
        if (!t) return std::nullopt;
        std::vector<int64_t> src(static_cast<size_t>(inst.shape().rank()), -1);
        for (size_t i = 0; i < inst.dimensions().size(); ++i) {
          src[static_cast<size_t>(inst.dimensions()[i])] = static_cast<int64_t>(i);
        }
        return Remap(*t, src);
      }
      case HloOpcode::kTranspose: {
        auto t = Find(inst.operand(0));
        if (!t) return std::nullopt;
        return Remap(*t, inst.dimensions());
      }
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast: {
        auto t = Find(inst.operand(0));
        if (!t || !inst.operand(0)->shape().IsArray()) return std::nullopt;
        return ReshapeTiling(Dims(inst.operand(0)), Dims(&inst), *t);
      }
      case HloOpcode::kDot:
      case HloOpcode::kConvolution: {
        auto l = Find(inst.operand(0));
        auto r = Find(inst.operand(1));
        if (!l && !r) return std::nullopt;
        const DotAxes ax = MakeDotAxes(inst);
        return Remap(ChooseDotTiling(inst, l, r, std::nullopt, n_), ax.out);
      }
      case HloOpcode::kReduce: {
        if (inst.operand_count() != 2) return std::nullopt;
        auto t = Find(inst.operand(0));
        if (!t) return std::nullopt;
        std::vector<int64_t> kept =
            Complement(inst.operand(0)->shape().rank(), inst.dimensions(), {});
        return Remap(*t, kept);
      }
      case HloOpcode::kSlice:
      case HloOpcode::kPad:
      case HloOpcode::kConcatenate:
      case HloOpcode::kReverse:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kSelectAndScatter:
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice: {
        // The most split cut operand's tiling, with the changed dimensions made whole.
        const std::optional<std::vector<int64_t>> changed = ChangedDims(inst);
        if (!changed) return std::nullopt;
        std::optional<Tiling> best;
        for (int64_t i = 0; i < CutOperandCount(inst); ++i) {
          const HloInstruction* op = inst.operand(i);
          if (!op->shape().IsArray() || op->shape().rank() != inst.shape().rank()) continue;
          auto t = Find(op);
          if (t && (!best || t->num_tiles() > best->num_tiles())) best = t;
        }
        if (!best) return std::nullopt;
        std::vector<int64_t> axes;
        for (int64_t d = 0; d < best->rank(); ++d) {
          axes.push_back(std::find(changed->begin(), changed->end(), d) == changed->end() ? d : -1);
        }
        return Remap(*best, axes);
      }
      case HloOpcode::kGetTupleElement: {
        const HloInstruction* tuple = inst.operand(0);
        if (tuple->opcode() != HloOpcode::kTuple) return std::nullopt;
        return Find(tuple->operand(inst.tuple_index()));
      }
      case HloOpcode::kGather: {
        const std::optional<std::vector<int64_t>> axes = GatherBatchAxes(inst);
        auto t = Find(inst.operand(1));
        if (!axes || !t) return std::nullopt;
        return Remap(*t, *axes);
      }
      default:
        return std::nullopt;
    }
  }

  // The tiling `user` wants for its operand `i`, given the user's own tiling; nullopt if none.
  std::optional<Tiling> WantedBy(const HloInstruction& user, int64_t i) const {
    const HloInstruction* op = user.operand(i);
    if (!op->shape().IsArray()) return std::nullopt;
    if (user.opcode() == HloOpcode::kTuple) {
      auto it = a_.tuple.find(&user);
      if (it != a_.tuple.end()) return it->second[static_cast<size_t>(i)];
      // get-tuple-element(tuple(...), i) is element i itself (what XLA's tuple simplifier folds;
      // an unrolled while loop leaves one per loop-carried value): the element is wanted as the
      // most split of those reads is.
      std::optional<Tiling> best;
      for (const HloInstruction* gte : user.users()) {
        if (gte->opcode() != HloOpcode::kGetTupleElement || gte->tuple_index() != i) continue;
        auto t = Find(gte);
        if (t && (!best || t->num_tiles() > best->num_tiles())) best = t;
      }
      return best;
    }
    auto ut = Find(&user);
    if (!ut) return std::nullopt;
    if (user.opcode() == HloOpcode::kDot || user.opcode() == HloOpcode::kConvolution) {
      if (i > 1) return std::nullopt;
      const DotAxes ax = MakeDotAxes(user);
      const std::optional<Tiling> other = Find(user.operand(1 - i));
      Tiling d = ChooseDotTiling(user, i == 0 ? std::nullopt : other, i == 1 ? std::nullopt : other,
                                 *ut, n_);
      return Remap(d, i == 0 ? ax.lhs : ax.rhs);
    }
    return OperandTilingFor(user, i, *ut);
  }

 private:
  std::optional<Tiling> FromUsers(const HloInstruction& inst) const {
    std::optional<Tiling> best;
    for (const HloInstruction* user : inst.users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != &inst) continue;
        auto t = Usable(inst, WantedBy(*user, i));
        if (t && (!best || t->num_tiles() > best->num_tiles())) best = t;
      }
    }
    return best;
  }

  const hlo::HloModule& module_;
  const hlo::HloComputation& comp_;
  const int64_t n_;
  Assignment a_;
};

}  // namespace

namespace {

// A convolution as a dot (XLA's dot_as_convolution_util does the same classification): the input
// batch is a free dimension of the lhs, the kernel's output feature a free dimension of the rhs,
// the input feature the contracting dimension; a spatial dimension with a one-element window
// (a 1x1 convolution's) is a free dimension of the lhs too. Windowed spatial dimensions are never
// cut (-1): a cut would need the neighbours' halo. Grouped convolutions tie the feature (or batch)
// dimensions to the groups: only the dimensions the groups leave alone may be cut.
DotAxes MakeConvolutionAxes(const HloInstruction& conv) {
  const hlo::ConvolutionDimensionNumbers& cd = conv.convolution_dimension_numbers();
  const bool feature_groups = conv.feature_group_count() > 1;
  const bool batch_groups = conv.batch_group_count() > 1;
  DotAxes ax;
  ax.lhs.assign(static_cast<size_t>(conv.operand(0)->shape().rank()), -1);
  ax.rhs.assign(static_cast<size_t>(conv.operand(1)->shape().rank()), -1);
  ax.out.assign(static_cast<size_t>(conv.shape().rank()), -1);
  auto lhs_free = [&](int64_t lhs_dim, int64_t out_dim) {
    ax.lhs[static_cast<size_t>(lhs_dim)] = ax.rank;
    ax.out[static_cast<size_t>(out_dim)] = ax.rank;
    ++ax.rank;
  };
  if (!batch_groups) lhs_free(cd.input_batch_dimension, cd.output_batch_dimension);
  const auto& wd = conv.window().dimensions;
  for (size_t k = 0; k < cd.input_spatial_dimensions.size() && k < wd.size(); ++k) {
    if (IsTrivialWindow(wd[k]))
      lhs_free(cd.input_spatial_dimensions[k], cd.output_spatial_dimensions[k]);
  }
  if (!feature_groups && !batch_groups) {
    ax.rhs[static_cast<size_t>(cd.kernel_output_feature_dimension)] = ax.rank;
    ax.out[static_cast<size_t>(cd.output_feature_dimension)] = ax.rank;
    ++ax.rank;
  }
  if (!feature_groups) {
    ax.lhs[static_cast<size_t>(cd.input_feature_dimension)] = ax.rank;
    ax.rhs[static_cast<size_t>(cd.kernel_input_feature_dimension)] = ax.rank;
    ax.contracting.push_back(ax.rank);
    ++ax.rank;
  }
  return ax;
}

}  // namespace

DotAxes MakeDotAxes(const HloInstruction& dot) {
  if (dot.opcode() == HloOpcode::kConvolution) return MakeConvolutionAxes(dot);
  const hlo::DotDimensionNumbers& dn = dot.dot_dimension_numbers();
  const int64_t lr = dot.operand(0)->shape().rank();
  const int64_t rr = dot.operand(1)->shape().rank();
  const std::vector<int64_t> lfree =
      Complement(lr, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rfree =
      Complement(rr, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const auto nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  const auto nlf = static_cast<int64_t>(lfree.size());
  const auto nrf = static_cast<int64_t>(rfree.size());
  const auto nc = static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
  DotAxes ax;
  ax.rank = nb + nlf + nrf + nc;
  ax.lhs.assign(static_cast<size_t>(lr), 0);
  ax.rhs.assign(static_cast<size_t>(rr), 0);
  for (int64_t k = 0; k < nb; ++k) {
    ax.lhs[static_cast<size_t>(dn.lhs_batch_dimensions[static_cast<size_t>(k)])] = k;
    ax.rhs[static_cast<size_t>(dn.rhs_batch_dimensions[static_cast<size_t>(k)])] = k;
    ax.out.push_back(k);
  }
  for (int64_t k = 0; k < nlf; ++k) {
    ax.lhs[static_cast<size_t>(lfree[static_cast<size_t>(k)])] = nb + k;
    ax.out.push_back(nb + k);
  }
  for (int64_t k = 0; k < nrf; ++k) {
    ax.rhs[static_cast<size_t>(rfree[static_cast<size_t>(k)])] = nb + nlf + k;
    ax.out.push_back(nb + nlf + k);
  }
  for (int64_t k = 0; k < nc; ++k) {
    const int64_t a = nb + nlf + nrf + k;
    ax.lhs[static_cast<size_t>(dn.lhs_contracting_dimensions[static_cast<size_t>(k)])] = a;
    ax.rhs[static_cast<size_t>(dn.rhs_contracting_dimensions[static_cast<size_t>(k)])] = a;
    ax.contracting.push_back(a);
  }
  return ax;
}

Tiling ChooseDotTiling(const HloInstruction& dot, const std::optional<Tiling>& lhs,
                       const std::optional<Tiling>& rhs, const std::optional<Tiling>& out,
                       int64_t num_partitions) {
  const DotAxes ax = MakeDotAxes(dot);
  std::vector<Tiling> cands = DotCandidates(dot, ax, lhs, rhs, out, num_partitions);
  // Operands whose cuts agree are used as they are, as XLA's dot handler does: no operand moves
  // and the work stays split, even when an all-reduce of the result moves more bytes than
  // gathering the operands would (a weight gradient, larger than its batch-split operands, whose
  // gathered form every partition would compute whole).
  if (lhs && rhs) {
    for (const Tiling& d : cands) {
      if (d.num_tiles() > 1 && SameLayout(Remap(d, ax.lhs), *lhs) &&
          SameLayout(Remap(d, ax.rhs), *rhs)) {
        return d;
      }
    }
  }
  const Tiling* best = nullptr;
  double best_cost = 0;
  for (const Tiling& d : cands) {
    double cost = 0;
    if (lhs && !SameLayout(Remap(d, ax.lhs), *lhs)) cost += Bytes(dot.operand(0));
    if (rhs && !SameLayout(Remap(d, ax.rhs), *rhs)) cost += Bytes(dot.operand(1));
    bool partial = false;
    for (int64_t a : ax.contracting) partial |= d.tiles[static_cast<size_t>(a)] > 1;
    if (partial) cost += Bytes(&dot);
    if (out && !SameLayout(Remap(d, ax.out), *out)) cost += Bytes(&dot);
    // Ties: more tiles means less work per partition.
    cost -= 1e-3 * static_cast<double>(d.num_tiles()) / static_cast<double>(num_partitions);
    if (best == nullptr || cost < best_cost) {
      best = &d;
      best_cost = cost;
    }
  }
  return *best;  // the unsplit candidate always exists
}

std::optional<std::vector<int64_t>> GatherBatchAxes(const HloInstruction& gather) {
  if (gather.opcode() != HloOpcode::kGather || gather.operand_count() != 2 ||
      !gather.shape().IsArray() || !gather.operand(1)->shape().IsArray()) {
    return std::nullopt;
  }
  const hlo::GatherDimensionNumbers& g = gather.gather_dimension_numbers();
  if (!g.operand_batching_dims.empty() || !g.start_indices_batching_dims.empty())
    return std::nullopt;
  const int64_t index_rank = gather.operand(1)->shape().rank();
  std::vector<int64_t> batch;  // start-indices dimensions but index_vector_dim, in order
  for (int64_t d = 0; d < index_rank; ++d) {
    if (d != g.index_vector_dim) batch.push_back(d);
  }
  std::vector<int64_t> axes;
  size_t next = 0;
  for (int64_t d = 0; d < gather.shape().rank(); ++d) {
    if (std::find(g.offset_dims.begin(), g.offset_dims.end(), d) != g.offset_dims.end()) {
      axes.push_back(-1);
    } else {
      if (next >= batch.size()) return std::nullopt;  // malformed: more batch dims than indices
      axes.push_back(batch[next++]);
    }
  }
  if (next != batch.size()) return std::nullopt;
  return axes;
}

namespace {

// True if folding `init` (a scalar constant) into a combination by `op` any number of times
// changes nothing: 0 for add / or, 1 for multiply / and, any value for maximum / minimum.
bool IsCombinerIdentity(HloOpcode op, const HloInstruction* init) {
  if (op == HloOpcode::kMaximum || op == HloOpcode::kMinimum) return true;
  if (init->opcode() != HloOpcode::kConstant || init->literal().elided) return false;
  const hlo::LiteralValues& v = init->literal();
  double value = 0;
  if (v.float_values.size() == 1) {
    value = v.float_values[0];
  } else if (v.int_values.size() == 1) {
    value = static_cast<double>(v.int_values[0]);
  } else {
    return false;
  }
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kOr:
      return value == 0;
    case HloOpcode::kMultiply:
    case HloOpcode::kAnd:
      return value == 1;
    default:
      return false;
  }
}

}  // namespace

bool ReduceCanAllReduce(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce || reduce.operand_count() != 2) return false;
  const std::optional<HloOpcode> op = ReducerOpcode(reduce);
  return op && IsCombinerIdentity(*op, reduce.operand(1));
}

std::optional<std::vector<int64_t>> ScatterBatchAxes(const HloInstruction& scatter) {
  if (scatter.opcode() != HloOpcode::kScatter || scatter.operand_count() != 3 ||
      !scatter.shape().IsArray()) {
    return std::nullopt;
  }
  const hlo::ScatterDimensionNumbers& s = scatter.scatter_dimension_numbers();
  if (!s.input_batching_dims.empty() || !s.scatter_indices_batching_dims.empty()) {
    return std::nullopt;
  }
  const std::optional<HloOpcode> op = ReducerOpcode(scatter);
  const HloInstruction* operand = scatter.operand(0);
  if (!op || operand->opcode() != HloOpcode::kBroadcast ||
      operand->operand(0)->shape().rank() != 0 || !IsCombinerIdentity(*op, operand->operand(0))) {
    return std::nullopt;
  }
  std::vector<int64_t> batch;  // start-indices dimensions but index_vector_dim, in order
  for (int64_t d = 0; d < scatter.operand(1)->shape().rank(); ++d) {
    if (d != s.index_vector_dim) batch.push_back(d);
  }
  std::vector<int64_t> axes;
  size_t next = 0;
  for (int64_t d = 0; d < scatter.operand(2)->shape().rank(); ++d) {
    if (std::find(s.update_window_dims.begin(), s.update_window_dims.end(), d) !=
        s.update_window_dims.end()) {
      axes.push_back(-1);
    } else {
      if (next >= batch.size()) return std::nullopt;
      axes.push_back(batch[next++]);
    }
  }
  if (next != batch.size()) return std::nullopt;
  return axes;
}

bool KeepsTiling(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kBitcastConvert) {
    // Elementwise when the element widths match (the shapes are then equal); a width change adds
    // or drops a minor dimension.
    return inst.operand_count() == 1 && inst.shape().IsArray() &&
           inst.operand(0)->shape().IsArray() && Dims(inst.operand(0)) == Dims(&inst);
  }
  return hlo::IsElementwise(inst.opcode()) ||
         (inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == "Sharding");
}

std::optional<Tiling> OperandTilingFor(const HloInstruction& user, int64_t i, const Tiling& ut) {
  const HloInstruction* op = user.operand(i);
  if (!op->shape().IsArray()) return std::nullopt;
  if (KeepsTiling(user)) {
    if (Dims(op) != Dims(&user)) return std::nullopt;
    return ut;
  }
  if (auto changed = ChangedDims(user)) {
    if (i >= CutOperandCount(user)) return Tiling::Replicated(op->shape().rank(), ut.num_partitions());
    if (op->shape().rank() != user.shape().rank()) return std::nullopt;
    for (int64_t d : *changed) {
      if (ut.tiles[static_cast<size_t>(d)] != 1) return std::nullopt;
    }
    return ut;
  }
  switch (user.opcode()) {
    case HloOpcode::kBroadcast:
      return Remap(ut, user.dimensions());
    case HloOpcode::kTranspose: {
      std::vector<int64_t> inv(user.dimensions().size());
      for (size_t j = 0; j < inv.size(); ++j) {
        inv[static_cast<size_t>(user.dimensions()[j])] = static_cast<int64_t>(j);
      }
      return Remap(ut, inv);
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return ReshapeTiling(Dims(&user), Dims(op), ut);
    case HloOpcode::kReduce: {
      if (i != 0 || user.operand_count() != 2) return std::nullopt;
      std::vector<int64_t> src(static_cast<size_t>(op->shape().rank()), -1);
      std::vector<int64_t> kept = Complement(op->shape().rank(), user.dimensions(), {});
      for (size_t k = 0; k < kept.size(); ++k) {
        src[static_cast<size_t>(kept[k])] = static_cast<int64_t>(k);
      }
      return Remap(ut, src);
    }
    case HloOpcode::kGather: {
      const std::optional<std::vector<int64_t>> axes = GatherBatchAxes(user);
      if (!axes) return std::nullopt;
      if (i == 0) return Tiling::Replicated(op->shape().rank(), ut.num_partitions());
      // Start-indices dimension k is cut as the result dimension running over it; the index
      // vector dimension stays whole (result offset dimensions' cuts fold into replication).
      std::vector<int64_t> src(static_cast<size_t>(op->shape().rank()), -1);
      for (size_t d = 0; d < axes->size(); ++d) {
        if ((*axes)[d] >= 0) src[static_cast<size_t>((*axes)[d])] = static_cast<int64_t>(d);
      }
      return Remap(ut, src);
    }
    default:
      return std::nullopt;
  }
}

StatusOr<Assignment> PropagateShardings(const hlo::HloModule& module) {
  return Propagator(module).Run();
}

}  // namespace tpusim::compiler::spmd
