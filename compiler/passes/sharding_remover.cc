#include "compiler/passes/sharding_remover.h"

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {

bool IsShardingAnnotation(const hlo::HloInstruction& inst) {
  return inst.opcode() == hlo::HloOpcode::kCustomCall && inst.operand_count() == 1 &&
         (inst.custom_call_target() == "Sharding" ||
          inst.custom_call_target() == "xla.sdy.FuncResultSharding") &&
         inst.operand(0)->shape().Compatible(inst.shape());
}

StatusOr<bool> ShardingRemover::Run(hlo::HloModule& module) {
  const bool partitioned = module.num_partitions() > 1;
  return RewriteEach(
      module,
      [partitioned](const hlo::HloInstruction& inst) {
        return IsShardingAnnotation(inst) &&
               !(partitioned && inst.custom_call_target() == "Sharding");
      },
      [](hlo::HloComputation& comp, hlo::HloInstruction* inst) {
        inst->ReplaceAllUsesWith(inst->operand(0));
        comp.RemoveInstruction(inst);
      });
}

}  // namespace tpusim::compiler
