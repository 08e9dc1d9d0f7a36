// pad-negative-padding: a `pad` with negative edge padding removes elements at that edge (XLA:
// interior padding applies first, then the edge padding, a negative amount trimming the padded
// array), which the lowering's pad (non-negative amounts only) does not do. As XLA's algebraic
// simplifier rewrites it: a pad with the negative edge amounts set to 0, then a slice that trims
// them.
//
// Contract. For pad(x, v) with some edge_padding_low or edge_padding_high < 0: pad(x, v) with
// max(low, 0), max(high, 0) and the same interior padding, then slice [max(-low, 0),
// size - max(-high, 0)) along every dimension, stride 1. Shape and values unchanged.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class PadNegativePadding : public HloPass {
 public:
  std::string_view name() const override { return "pad-negative-padding"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
