#include "compiler/passes/select_and_scatter_expander.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr int64_t kMaxWindowPositions = 4096;

// True if `c`'s root is `op`(parameter 0, parameter 1).
bool RootOfParameters(const hlo::HloComputation* c, HloOpcode op) {
  if (c == nullptr || c->num_parameters() != 2) return false;
  const HloInstruction* r = c->root_instruction();
  return r->opcode() == op && r->operand_count() == 2 &&
         r->operand(0)->opcode() == HloOpcode::kParameter &&
         r->operand(1)->opcode() == HloOpcode::kParameter &&
         r->operand(0)->parameter_number() == 0 && r->operand(1)->parameter_number() == 1;
}

bool Expandable(const HloInstruction& ss) {
  if (ss.opcode() != HloOpcode::kSelectAndScatter || ss.operand_count() != 3 ||
      !ss.shape().IsArray() || ss.operand(2)->shape().rank() != 0 ||
      !RootOfParameters(ss.select(), HloOpcode::kCompare) ||
      !RootOfParameters(ss.scatter(), HloOpcode::kAdd)) {
    return false;
  }
  const auto& win = ss.window().dimensions;
  if (static_cast<int64_t>(win.size()) != ss.operand(0)->shape().rank()) return false;
  int64_t positions = 1;
  for (const auto& w : win) {
    if (w.window_reversal || w.padding_low < 0 || w.padding_high < 0 || w.stride < 1 ||
        w.base_dilation != 1 || w.window_dilation != 1 || w.size < 1) {
      return false;
    }
    positions *= w.size;
    if (positions > kMaxWindowPositions) return false;
  }
  return true;
}

// True if the windows tile the operand exactly (stride == size and no padding in every dimension,
// the operand `out` windows long: 2x2/2 max pooling): every operand position is in one window.
bool WindowsTile(const HloInstruction& ss) {
  const auto& win = ss.window().dimensions;
  const hlo::Shape& operand = ss.operand(0)->shape();
  const hlo::Shape& source = ss.operand(1)->shape();
  for (size_t i = 0; i < win.size(); ++i) {
    const auto d = static_cast<int64_t>(i);
    if (win[i].stride != win[i].size || win[i].padding_low != 0 || win[i].padding_high != 0 ||
        operand.dimensions(d) != source.dimensions(d) * win[i].size) {
      return false;
    }
  }
  return true;
}

// The scatter of windows that tile the operand (WindowsTile): each position receives at most one
// contribution, so the result is init + the windows' contributions interleaved. `contrib[k]`
// (source-shaped, window position k in row-major order) is reshaped to [s0, 1, s1, 1, ...];
// the contributions are concatenated along the interleaving dimensions, the last window dimension
// first, into [s0, w0, s1, w1, ...], which is the operand's row-major order: a reshape. The data
// moves about twice the result's bytes, where placing and adding each position moves 2W times.
HloInstruction* InterleaveTiles(HloBuilder& b, const HloInstruction& ss,
                                std::vector<HloInstruction*> contrib) {
  const auto& win = ss.window().dimensions;
  const std::vector<int64_t>& s = ss.operand(1)->shape().dimensions();
  const size_t rank = win.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < rank; ++i) dims.insert(dims.end(), {s[i], 1});
  for (HloInstruction*& c : contrib) c = b.Reshape(c, dims, "tile");
  for (size_t d = rank; d-- > 0;) {
    const int64_t w = win[d].size;
    if (w == 1) continue;
    std::vector<HloInstruction*> next;
    for (size_t g = 0; g < contrib.size(); g += static_cast<size_t>(w)) {
      std::vector<HloInstruction*> group(contrib.begin() + static_cast<std::ptrdiff_t>(g),
                                         contrib.begin() + static_cast<std::ptrdiff_t>(g) + w);
      next.push_back(b.Concatenate(group, static_cast<int64_t>(2 * d + 1), "tiles"));
    }
    contrib = std::move(next);
  }
  HloInstruction* tiled = b.Reshape(contrib.front(), ss.shape().dimensions(), "interleaved");
  return b.Binary(HloOpcode::kAdd, b.Broadcast(ss.operand(2), ss.shape(), {}, "init"), tiled,
                  "scattered");
}

void Expand(hlo::HloComputation& comp, HloInstruction* ss) {
  HloBuilder b(&comp, ss);
  const auto& win = ss->window().dimensions;
  const size_t rank = win.size();
  HloInstruction* operand = ss->operand(0);
  HloInstruction* source = ss->operand(1);
  HloInstruction* init = ss->operand(2);
  const hlo::ComparisonDirection dir = ss->select()->root_instruction()->comparison_direction();
  const hlo::PrimitiveType type = ss->shape().element_type();
  const hlo::Shape out_shape(type, source->shape().dimensions());
  const hlo::Shape idx_shape(hlo::PrimitiveType::kS32, source->shape().dimensions());

  hlo::PaddingConfig edges;
  edges.dimensions.resize(rank);
  bool padded = false;
  std::vector<int64_t> padded_dims;
  for (size_t i = 0; i < rank; ++i) {
    edges.dimensions[i].edge_padding_low = win[i].padding_low;
    edges.dimensions[i].edge_padding_high = win[i].padding_high;
    padded = padded || win[i].padding_low > 0 || win[i].padding_high > 0;
    padded_dims.push_back(operand->shape().dimensions(static_cast<int64_t>(i)) +
                          win[i].padding_low + win[i].padding_high);
  }
  HloInstruction* x = operand;
  HloInstruction* valid = nullptr;  // in-bounds mask of the padded operand
  if (padded) {
    x = b.Pad(operand, init, edges, "pad");
    HloInstruction* t = b.ScalarConstant(hlo::PrimitiveType::kPred, 1, "true");
    HloInstruction* f = b.ScalarConstant(hlo::PrimitiveType::kPred, 0, "false");
    valid =
        b.Pad(b.Broadcast(t, hlo::Shape(hlo::PrimitiveType::kPred, operand->shape().dimensions()),
                          {}, "inbounds"),
              f, edges, "valid");
  }
  const std::vector<int64_t>& out = source->shape().dimensions();
  int64_t positions = 1;
  for (const auto& d : win) positions *= d.size;
  std::vector<std::vector<int64_t>> offsets;
  for (int64_t p = 0; p < positions; ++p) {
    std::vector<int64_t> w(rank);
    int64_t rem = p;
    for (size_t i = rank; i-- > 0;) {
      w[i] = rem % win[i].size;
      rem /= win[i].size;
    }
    offsets.push_back(std::move(w));
  }
  auto window_slice = [&](HloInstruction* v, const std::vector<int64_t>& w, const char* what) {
    std::vector<int64_t> start, limit, step;
    for (size_t i = 0; i < rank; ++i) {
      start.push_back(w[i]);
      limit.push_back(w[i] + (out[i] - 1) * win[i].stride + 1);
      step.push_back(win[i].stride);
    }
    return b.Slice(v, start, limit, step, what);
  };
  auto index = [&](int64_t k) {
    return b.Broadcast(b.ScalarConstant(hlo::PrimitiveType::kS32, static_cast<double>(k), "k"),
                       idx_shape, {}, "kb");
  };

  // 1. Selection.
  HloInstruction* best = nullptr;
  HloInstruction* idx = nullptr;
  HloInstruction* have = nullptr;  // some in-bounds position seen (padded windows only)
  for (int64_t k = 0; k < positions; ++k) {
    HloInstruction* xk = window_slice(x, offsets[static_cast<size_t>(k)], "window");
    HloInstruction* vk =
        padded ? window_slice(valid, offsets[static_cast<size_t>(k)], "window_valid") : nullptr;
    if (k == 0) {
      best = xk;
      idx = index(0);
      have = vk;
      continue;
    }
    HloInstruction* take = b.Unary(HloOpcode::kNot, b.Compare(best, xk, dir, "keep"), "take");
    if (padded) {
      take = b.Binary(HloOpcode::kAnd, vk,
                      b.Binary(HloOpcode::kOr, b.Unary(HloOpcode::kNot, have, "none"), take, "or"),
                      "take_valid");
      have = b.Binary(HloOpcode::kOr, have, vk, "have");
    }
    best = b.Select(take, xk, best, "best");
    idx = b.Select(take, index(k), idx, "selected");
  }

  // 2. Scatter: result = init + the source value of every window at its selected position, k from
  // the last window position to the first: the windows that hold a position p at offsets k1 > k2
  // (row-major) are o1 = (p - k1) / stride < o2, so each position's contributions are added in
  // window (source) order, as the evaluator adds them.
  HloInstruction* zero = b.Broadcast(b.ScalarConstant(type, 0, "zero"), out_shape, {}, "zeros");
  if (WindowsTile(*ss)) {
    std::vector<HloInstruction*> contrib;
    for (int64_t k = 0; k < positions; ++k) {
      HloInstruction* chosen = b.Compare(idx, index(k), hlo::ComparisonDirection::kEq, "chosen");
      contrib.push_back(b.Select(chosen, source, zero, "contribution"));
    }
    ss->ReplaceAllUsesWith(InterleaveTiles(b, *ss, std::move(contrib)));
    comp.RemoveInstruction(ss);
    return;
  }
  HloInstruction* zero_scalar = b.ScalarConstant(type, 0, "pad_zero");
  HloInstruction* result = b.Broadcast(init, ss->shape(), {}, "init");
  for (int64_t k = positions - 1; k >= 0; --k) {
    const std::vector<int64_t>& w = offsets[static_cast<size_t>(k)];
    HloInstruction* chosen = b.Compare(idx, index(k), hlo::ComparisonDirection::kEq, "chosen");
    if (padded) chosen = b.Binary(HloOpcode::kAnd, chosen, have, "chosen_valid");
    HloInstruction* contrib = b.Select(chosen, source, zero, "contribution");
    hlo::PaddingConfig place;
    place.dimensions.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      auto& p = place.dimensions[i];
      p.edge_padding_low = w[i];
      p.interior_padding = win[i].stride - 1;
      p.edge_padding_high = padded_dims[i] - (w[i] + (out[i] - 1) * win[i].stride + 1);
    }
    HloInstruction* placed = b.Pad(contrib, zero_scalar, place, "placed");
    if (padded) {
      std::vector<int64_t> start, limit, step(rank, 1);
      for (size_t i = 0; i < rank; ++i) {
        start.push_back(win[i].padding_low);
        limit.push_back(win[i].padding_low + operand->shape().dimensions(static_cast<int64_t>(i)));
      }
      placed = b.Slice(placed, start, limit, step, "unpadded");
    }
    result = b.Binary(HloOpcode::kAdd, result, placed, "scattered");
  }
  ss->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(ss);
}

}  // namespace

StatusOr<bool> SelectAndScatterExpander::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  std::vector<HloInstruction*> todo;
  for (const auto& i : entry->instructions()) {
    if (Expandable(*i)) todo.push_back(i.get());
  }
  for (HloInstruction* ss : todo) Expand(*entry, ss);
  return !todo.empty();
}

}  // namespace tpusim::compiler
