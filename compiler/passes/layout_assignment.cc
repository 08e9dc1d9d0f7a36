#include "compiler/passes/layout_assignment.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "hlo/opcode.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;
using Order = std::vector<int64_t>;  // minor_to_major

namespace {

Order RowMajor(int64_t rank) {
  Order m2m;
  for (int64_t d = rank - 1; d >= 0; --d) m2m.push_back(d);
  return m2m;
}

// Bytes `shape` takes in its TPU tiles when its dimensions are in the order `m2m`.
int64_t PaddedBytes(const hlo::Shape& shape, const Order& m2m, const hlo::TileRule& tiles) {
  const hlo::Shape s = InLayout(shape, m2m);
  return hlo::TiledByteSize(s, hlo::TpuTile(s, tiles));
}

// True if the entry states layouts of XLA's layout assignment: a tile, or an order other than the
// printer's default, on any array.
bool HasAssignedLayouts(const hlo::HloComputation& entry) {
  for (const auto& up : entry.instructions()) {
    for (const hlo::Shape* leaf : up->shape().Leaves()) {
      if (!leaf->IsArray() || !leaf->has_layout()) continue;
      const hlo::Layout& l = leaf->layout();
      if (!l.tiles.empty() || (!l.minor_to_major.empty() && l.minor_to_major != RowMajor(leaf->rank()))) {
        return true;
      }
    }
  }
  return false;
}

// The layout `minor` on the lanes, `second` on the sublanes, `spatial` major with its last
// dimension most minor; or, if it pads more than the swap of `minor` and `second`, that swap.
Order PreferMinor(const hlo::Shape& shape, int64_t minor, int64_t second,
                  const std::vector<int64_t>& spatial, const hlo::TileRule& tiles) {
  auto with = [&](int64_t a, int64_t b) {
    Order m2m{a, b};
    for (auto it = spatial.rbegin(); it != spatial.rend(); ++it) m2m.push_back(*it);
    return m2m;
  };
  const Order first = with(minor, second), swapped = with(second, minor);
  return PaddedBytes(shape, swapped, tiles) < PaddedBytes(shape, first, tiles) ? swapped : first;
}

bool IsPermutation(const Order& m2m, int64_t rank) {
  if (static_cast<int64_t>(m2m.size()) != rank) return false;
  Order sorted = m2m;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d = 0; d < rank; ++d) {
    if (sorted[d] != d) return false;
  }
  return true;
}

// Ops whose result dimension d is operand dimension d (for operands of the result's rank).
bool KeepsDimensions(HloOpcode op) {
  switch (op) {
    case HloOpcode::kConvert:
    case HloOpcode::kCopy:
    case HloOpcode::kPad:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kBitcastConvert:
      return true;
    default:
      return hlo::IsElementwise(op);
  }
}

// The layout of `user`'s result implied by its operand `operand` having layout `m2m`; nullopt
// where the user's layout does not follow its operand's.
std::optional<Order> ForwardLayout(const HloInstruction& user, const HloInstruction& operand,
                                   const Order& m2m) {
  const int64_t rank = user.shape().rank();
  if (KeepsDimensions(user.opcode()) && operand.shape().rank() == rank) return m2m;
  if (user.opcode() == HloOpcode::kTranspose) {
    // Result dimension i is operand dimension perm[i].
    const Order& perm = user.dimensions();
    Order inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    Order out;
    for (int64_t d : m2m) out.push_back(inv[d]);
    return out;
  }
  if (user.opcode() == HloOpcode::kReduce && user.shape().IsArray()) {
    const Order& reduced = user.dimensions();
    Order out;
    for (int64_t d : m2m) {
      if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
      out.push_back(d - std::count_if(reduced.begin(), reduced.end(),
                                      [d](int64_t r) { return r < d; }));
    }
    return out;
  }
  return std::nullopt;
}

// The layout of `inst`'s operand `operand` implied by `inst`'s result having layout `m2m`.
std::optional<Order> BackwardLayout(const HloInstruction& inst, const HloInstruction& operand,
                                    const Order& m2m) {
  const int64_t rank = operand.shape().rank();
  if (KeepsDimensions(inst.opcode()) && inst.shape().rank() == rank) return m2m;
  if (inst.opcode() == HloOpcode::kTranspose) {
    Order out;
    for (int64_t d : m2m) out.push_back(inst.dimensions()[d]);
    return out;
  }
  return std::nullopt;
}

class LayoutAssigner {
 public:
  LayoutAssigner(const hlo::HloComputation& entry, const hlo::TileRule& tiles)
      : entry_(entry), tiles_(tiles), stated_(HasAssignedLayouts(entry)) {
    const HloInstruction* root = entry.root_instruction();
    fixed_.insert(root);
    if (root->opcode() == HloOpcode::kTuple) fixed_.insert(root->operands().begin(), root->operands().end());
  }

  TpuLayouts Run() {
    for (const auto& up : entry_.instructions()) {
      if (up->opcode() == HloOpcode::kConvolution) Seed(*up);
    }
    Drain();
    // A dump's stated layouts constrain their neighbours the compiler inserted.
    for (const auto& up : entry_.instructions()) {
      const hlo::Shape& s = up->shape();
      if (stated_ && s.IsArray() && s.rank() >= 2 && s.has_layout() &&
          IsPermutation(s.layout().minor_to_major, s.rank())) {
        queue_.emplace_back(up.get(), s.layout().minor_to_major);
      }
    }
    Drain();
    // What no constraint reaches takes the order that pads least.
    for (const auto& up : entry_.instructions()) {
      if (!Free(*up)) continue;
      Assign(*up, LeastPadding(up->shape()));
      Drain();
    }
    TpuLayouts changed;
    for (const auto& [inst, m2m] : assigned_) {
      const hlo::Shape& s = inst->shape();
      const Order had = s.has_layout() && !s.layout().minor_to_major.empty()
                            ? s.layout().minor_to_major
                            : RowMajor(s.rank());
      if (m2m != had) changed.emplace(inst, m2m);
    }
    return changed;
  }

 private:
  bool Free(const HloInstruction& inst) const {
    const hlo::Shape& s = inst.shape();
    if (!s.IsArray() || s.rank() < 2 || inst.opcode() == HloOpcode::kParameter ||
        fixed_.count(&inst) > 0 || assigned_.count(&inst) > 0) {
      return false;
    }
    return !(stated_ && s.has_layout());
  }

  void Assign(const HloInstruction& inst, const Order& m2m) {
    if (!Free(inst) || !IsPermutation(m2m, inst.shape().rank())) return;
    assigned_.emplace(&inst, m2m);
    queue_.emplace_back(&inst, m2m);
  }

  // Spreads each queued layout to the free neighbours it implies, breadth-first.
  void Drain() {
    while (!queue_.empty()) {
      const auto [inst, m2m] = queue_.front();
      queue_.pop_front();
      for (const HloInstruction* user : inst->users()) {
        if (auto l = ForwardLayout(*user, *inst, m2m)) Assign(*user, *l);
      }
      for (const HloInstruction* operand : inst->operands()) {
        if (auto l = BackwardLayout(*inst, *operand, m2m)) Assign(*operand, *l);
      }
    }
  }

  // The order with the fewest tile-padded bytes: each pair of dimensions tried on the lanes and
  // sublanes, the others major in row-major order; row-major unless another pads strictly less
  // (as XLA's TPU backend lays out f32[4,512,7,4] as {1,3,2,0} in the calibration profiles).
  Order LeastPadding(const hlo::Shape& shape) const {
    const int64_t rank = shape.rank();
    Order best = RowMajor(rank);
    int64_t best_bytes = PaddedBytes(shape, best, tiles_);
    for (int64_t a = rank - 1; a >= 0; --a) {
      for (int64_t b = rank - 1; b >= 0; --b) {
        if (a == b) continue;
        Order m2m{a, b};
        for (int64_t d : RowMajor(rank)) {
          if (d != a && d != b) m2m.push_back(d);
        }
        if (const int64_t bytes = PaddedBytes(shape, m2m, tiles_); bytes < best_bytes) {
          best = m2m;
          best_bytes = bytes;
        }
      }
    }
    return best;
  }

  void Seed(const HloInstruction& conv) {
    const auto& cd = conv.convolution_dimension_numbers();
    Assign(conv, PreferMinor(conv.shape(), cd.output_feature_dimension, cd.output_batch_dimension,
                             cd.output_spatial_dimensions, tiles_));
    const HloInstruction& lhs = *conv.operand(0);
    Assign(lhs, PreferMinor(lhs.shape(), cd.input_feature_dimension, cd.input_batch_dimension,
                            cd.input_spatial_dimensions, tiles_));
    const HloInstruction& rhs = *conv.operand(1);
    Assign(rhs, PreferMinor(rhs.shape(), cd.kernel_output_feature_dimension,
                            cd.kernel_input_feature_dimension, cd.kernel_spatial_dimensions,
                            tiles_));
  }

  const hlo::HloComputation& entry_;
  const hlo::TileRule& tiles_;
  const bool stated_;
  std::set<const HloInstruction*> fixed_;
  std::map<const HloInstruction*, Order> assigned_;
  std::deque<std::pair<const HloInstruction*, Order>> queue_;
};

}  // namespace

hlo::Shape InLayout(const hlo::Shape& shape, const std::vector<int64_t>& minor_to_major) {
  hlo::Shape s = shape;
  hlo::Layout layout;
  layout.minor_to_major = minor_to_major;
  s.set_layout(std::move(layout));
  return s;
}

TpuLayouts AssignTpuLayouts(const hlo::HloComputation& entry, const hlo::TileRule& tiles) {
  if (tiles.min_tile_bytes <= 0) return {};
  return LayoutAssigner(entry, tiles).Run();
}

}  // namespace tpusim::compiler
