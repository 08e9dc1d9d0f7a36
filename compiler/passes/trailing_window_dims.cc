#include "compiler/passes/trailing_window_dims.h"

#include <algorithm>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// True if `window` (ascending) is not the last window.size() of `rank` dimensions.
bool NotTrailing(const std::vector<int64_t>& window, int64_t rank) {
  const int64_t n = static_cast<int64_t>(window.size());
  for (int64_t k = 0; k < n; ++k) {
    if (window[static_cast<size_t>(k)] != rank - n + k) return true;
  }
  return false;
}

// The dimensions of a rank-`rank` array in the order [not in window..., window...].
std::vector<int64_t> WindowLast(const std::vector<int64_t>& window, int64_t rank) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(window.begin(), window.end(), d) == window.end()) order.push_back(d);
  }
  order.insert(order.end(), window.begin(), window.end());
  return order;
}

std::vector<int64_t> Trailing(int64_t n, int64_t rank) {
  std::vector<int64_t> dims;
  for (int64_t k = rank - n; k < rank; ++k) dims.push_back(k);
  return dims;
}

void RewriteGather(hlo::HloComputation& comp, HloInstruction* g) {
  HloBuilder b(&comp, g);
  const hlo::GatherDimensionNumbers& dn = g->gather_dimension_numbers();
  const int64_t rank = g->shape().rank();
  const std::vector<int64_t> order = WindowLast(dn.offset_dims, rank);  // new dim j = old order[j]
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(g->shape().dimensions(d));
  auto clone = CloneInstructionAs(*g, HloOpcode::kGather,
                                  hlo::Shape(g->shape().element_type(), dims), g->operands(),
                                  b.UniqueName(g->name() + ".window_last"));
  clone->mutable_gather_dimension_numbers().offset_dims =
      Trailing(static_cast<int64_t>(dn.offset_dims.size()), rank);
  HloInstruction* gathered = b.Add(std::move(clone));
  std::vector<int64_t> perm(static_cast<size_t>(rank));  // old dim order[j] = new dim j
  for (int64_t j = 0; j < rank; ++j) perm[static_cast<size_t>(order[static_cast<size_t>(j)])] = j;
  HloInstruction* result = b.Transpose(gathered, perm, "result");
  g->ReplaceAllUsesWith(result);
  comp.RemoveInstruction(g);
}

void RewriteScatter(hlo::HloComputation& comp, HloInstruction* s) {
  HloBuilder b(&comp, s);
  hlo::ScatterDimensionNumbers& dn = s->mutable_scatter_dimension_numbers();
  const int64_t n = (s->operand_count() - 1) / 2;  // operands..., indices, updates...
  const int64_t rank = s->operand(n + 1)->shape().rank();
  const std::vector<int64_t> order = WindowLast(dn.update_window_dims, rank);
  for (int64_t k = 0; k < n; ++k) {
    s->ReplaceOperandWith(n + 1 + k, b.Transpose(s->operand(n + 1 + k), order, "window_last"));
  }
  dn.update_window_dims = Trailing(static_cast<int64_t>(dn.update_window_dims.size()), rank);
}

}  // namespace

StatusOr<bool> TrailingWindowDims::Run(hlo::HloModule& module) {
  return RewriteEach(
      module,
      [](const HloInstruction& i) {
        if (i.opcode() == HloOpcode::kGather && i.shape().IsArray()) {
          return NotTrailing(i.gather_dimension_numbers().offset_dims, i.shape().rank());
        }
        if (i.opcode() == HloOpcode::kScatter && i.operand_count() >= 3) {
          const int64_t n = (i.operand_count() - 1) / 2;
          return NotTrailing(i.scatter_dimension_numbers().update_window_dims,
                             i.operand(n + 1)->shape().rank());
        }
        return false;
      },
      [](hlo::HloComputation& comp, HloInstruction* inst) {
        if (inst->opcode() == HloOpcode::kGather) {
          RewriteGather(comp, inst);
        } else {
          RewriteScatter(comp, inst);
        }
      });
}

}  // namespace tpusim::compiler
