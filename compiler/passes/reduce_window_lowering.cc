#include "compiler/passes/reduce_window_lowering.h"

#include <optional>
#include <vector>

#include "compiler/passes/elementwise_computation.h"
#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr int64_t kMaxWindowPositions = 4096;

// The reducer's binary opcode when its root is op(parameter 0, parameter 1).
std::optional<HloOpcode> ReducerOp(const HloInstruction& rw) {
  const hlo::HloComputation* c = rw.to_apply();
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const HloInstruction* root = c->root_instruction();
  switch (root->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
      break;
    default:
      return std::nullopt;
  }
  if (root->operand_count() != 2 || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter ||
      root->operand(0)->parameter_number() != 0 || root->operand(1)->parameter_number() != 1) {
    return std::nullopt;
  }
  return root->opcode();
}

// Any other reducer of two scalar parameters and one scalar result made of elementwise ops
// (jax.lax.cumlogsumexp's log-add-exp), applied to whole slices by ApplyElementwise.
bool ElementwiseReducer(const HloInstruction& rw) {
  const hlo::HloComputation* c = rw.to_apply();
  return c != nullptr && c->num_parameters() == 2 && c->root_instruction()->shape().IsArray() &&
         IsElementwiseComputation(*c);
}

bool Lowerable(const HloInstruction& rw) {
  if (rw.opcode() != HloOpcode::kReduceWindow || rw.operand_count() != 2 || !rw.shape().IsArray() ||
      !rw.operand(0)->shape().IsArray() || rw.operand(1)->shape().rank() != 0 ||
      (!ReducerOp(rw) && !ElementwiseReducer(rw))) {
    return false;
  }
  const auto& win = rw.window().dimensions;
  if (static_cast<int64_t>(win.size()) != rw.operand(0)->shape().rank()) return false;
  int64_t positions = 1;
  for (const auto& w : win) {
    if (w.window_reversal || w.padding_low < 0 || w.padding_high < 0 || w.stride < 1 ||
        w.base_dilation < 1 || w.window_dilation < 1 || w.size < 1) {
      return false;
    }
    positions *= w.size;
    if (positions > kMaxWindowPositions) return false;
  }
  // An elementwise reducer is cloned once per position: at most kMaxWindowPositions binary ops'
  // worth of instructions in all.
  return ReducerOp(rw) ||
         positions * rw.to_apply()->instruction_count() <= 2 * kMaxWindowPositions;
}

Status Lower(hlo::HloComputation& comp, HloInstruction* rw) {
  HloBuilder b(&comp, rw);
  const auto& win = rw->window().dimensions;
  const size_t rank = win.size();
  HloInstruction* x = rw->operand(0);
  HloInstruction* init = rw->operand(1);
  const std::optional<HloOpcode> op = ReducerOp(*rw);
  hlo::PaddingConfig pc;
  pc.dimensions.resize(rank);
  bool need_pad = false;
  for (size_t i = 0; i < rank; ++i) {
    auto& p = pc.dimensions[i];
    p.edge_padding_low = win[i].padding_low;
    p.edge_padding_high = win[i].padding_high;
    p.interior_padding = win[i].base_dilation - 1;
    need_pad = need_pad || p.edge_padding_low || p.edge_padding_high || p.interior_padding;
  }
  // An elementwise reducer skips padded positions, as XLA's emitters and evaluator do (they fold
  // only in-bounds elements; the listed reducers leave the init value's padding unchanged anyway):
  // `valid` marks the operand's own elements.
  HloInstruction* valid = nullptr;
  if (need_pad && !op) {
    hlo::Shape mask = x->shape();
    mask.set_element_type(hlo::PrimitiveType::kPred);
    valid = b.Pad(b.Splat(mask, 1, "true"), b.ScalarConstant(hlo::PrimitiveType::kPred, 0, "false"),
                  pc, "valid");
  }
  if (need_pad) x = b.Pad(x, init, pc, "pad");
  const std::vector<int64_t>& out = rw->shape().dimensions();
  HloInstruction* acc = b.Broadcast(init, rw->shape(), {}, "init");
  std::vector<int64_t> w(rank, 0);
  int64_t positions = 1;
  for (const auto& d : win) positions *= d.size;
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rem = p;
    for (size_t i = rank; i-- > 0;) {
      w[i] = rem % win[i].size;
      rem /= win[i].size;
    }
    std::vector<int64_t> start, limit, step;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t s = w[i] * win[i].window_dilation;
      start.push_back(s);
      limit.push_back(s + (out[i] - 1) * win[i].stride + 1);
      step.push_back(win[i].stride);
    }
    HloInstruction* slice = b.Slice(x, start, limit, step, "window");
    if (op) {
      acc = b.Binary(*op, acc, slice, "fold");
    } else {
      TPUSIM_ASSIGN_OR_RETURN(std::vector<HloInstruction*> folded,
                              ApplyElementwise(b, *rw->to_apply(), {acc, slice}, out));
      acc = valid == nullptr
                ? folded[0]
                : b.Select(b.Slice(valid, start, limit, step, "inside"), folded[0], acc, "fold");
    }
  }
  rw->ReplaceAllUsesWith(acc);
  comp.RemoveInstruction(rw);
  return OkStatus();
}

}  // namespace

StatusOr<bool> ReduceWindowLowering::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  std::vector<HloInstruction*> todo;
  for (const auto& i : entry->instructions()) {
    if (Lowerable(*i)) todo.push_back(i.get());
  }
  for (HloInstruction* rw : todo) TPUSIM_RETURN_IF_ERROR(Lower(*entry, rw));
  return !todo.empty();
}

}  // namespace tpusim::compiler
