#include "compiler/passes/pad_negative_padding.h"

#include <algorithm>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool HasNegativeEdge(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kPad) return false;
  for (const auto& p : i.padding_config().dimensions) {
    if (p.edge_padding_low < 0 || p.edge_padding_high < 0) return true;
  }
  return false;
}

void Rewrite(hlo::HloComputation& comp, HloInstruction* pad) {
  HloBuilder b(&comp, pad);
  hlo::PaddingConfig grow = pad->padding_config();
  std::vector<int64_t> start, limit, step;
  const std::vector<int64_t>& in = pad->operand(0)->shape().dimensions();
  for (size_t d = 0; d < grow.dimensions.size(); ++d) {
    hlo::PaddingDimension& p = grow.dimensions[d];
    const int64_t interior_size = in[d] == 0 ? 0 : in[d] + (in[d] - 1) * p.interior_padding;
    const int64_t size =
        interior_size + std::max<int64_t>(p.edge_padding_low, 0) +
        std::max<int64_t>(p.edge_padding_high, 0);
    start.push_back(std::max<int64_t>(-p.edge_padding_low, 0));
    limit.push_back(size - std::max<int64_t>(-p.edge_padding_high, 0));
    step.push_back(1);
    p.edge_padding_low = std::max<int64_t>(p.edge_padding_low, 0);
    p.edge_padding_high = std::max<int64_t>(p.edge_padding_high, 0);
  }
  HloInstruction* grown = b.Pad(pad->operand(0), pad->operand(1), grow, "non_negative");
  HloInstruction* trimmed = b.Slice(grown, start, limit, step, "trim");
  pad->ReplaceAllUsesWith(trimmed);
  comp.RemoveInstruction(pad);
}

}  // namespace

StatusOr<bool> PadNegativePadding::Run(hlo::HloModule& module) {
  return RewriteEach(module, HasNegativeEdge, Rewrite);
}

}  // namespace tpusim::compiler
