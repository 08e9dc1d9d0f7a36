#include "compiler/passes/map_expander.h"

#include <vector>

#include "compiler/passes/elementwise_computation.h"
#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {

StatusOr<bool> MapExpander::Run(hlo::HloModule& module) {
  bool changed = false;
  std::vector<hlo::HloComputation*> comps;
  for (const auto& c : module.computations()) comps.push_back(c.get());
  for (hlo::HloComputation* comp : comps) {
    std::vector<hlo::HloInstruction*> maps;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == hlo::HloOpcode::kMap && i->to_apply() != nullptr &&
          i->shape().IsArray() && IsElementwiseComputation(*i->to_apply())) {
        maps.push_back(i.get());
      }
    }
    for (hlo::HloInstruction* m : maps) {
      HloBuilder b(comp, m);
      std::vector<hlo::HloInstruction*> args(m->operands().begin(), m->operands().end());
      TPUSIM_ASSIGN_OR_RETURN(std::vector<hlo::HloInstruction*> out,
                              ApplyElementwise(b, *m->to_apply(), args, m->shape().dimensions()));
      m->ReplaceAllUsesWith(out[0]);
      comp->RemoveInstruction(m);
      changed = true;
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
