// map-expander: rewrites `map(x_1..x_k), to_apply=f` into f's scalar ops applied to whole arrays
// (elementwise_computation.h), which the VPU lowering runs — what XLA's TPU backend emits for a map
// (one loop calling f inline). Maps whose computation is not made of elementwise scalar ops are left
// for the lowering to report by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class MapExpander : public HloPass {
 public:
  std::string_view name() const override { return "map-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
