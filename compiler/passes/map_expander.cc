#include "compiler/passes/map_expander.h"

#include <vector>

#include "compiler/passes/elementwise_computation.h"
#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {

StatusOr<bool> MapExpander::Run(hlo::HloModule& module) {
  return RewriteEach(
      module,
      [](const hlo::HloInstruction& i) {
        return i.opcode() == hlo::HloOpcode::kMap && i.to_apply() != nullptr &&
               i.shape().IsArray() && IsElementwiseComputation(*i.to_apply());
      },
      [](hlo::HloComputation& comp, hlo::HloInstruction* m) -> StatusOr<bool> {
        HloBuilder b(&comp, m);
        std::vector<hlo::HloInstruction*> args(m->operands().begin(), m->operands().end());
        TPUSIM_ASSIGN_OR_RETURN(
            std::vector<hlo::HloInstruction*> out,
            ApplyElementwise(b, *m->to_apply(), args, m->shape().dimensions()));
        m->ReplaceAllUsesWith(out[0]);
        comp.RemoveInstruction(m);
        return true;
      });
}

}  // namespace tpusim::compiler
