// sharding-remover: sharding annotations that are identities on values leave the module before the
// lowering, as XLA's ShardingRemover (xla/service/sharding_remover.cc) and its Shardy import do:
//
//  * `custom-call(x), custom_call_target="Sharding"` (jax.lax.with_sharding_constraint,
//    PyTorch/XLA's mark_sharding) when the module is not partitioned (num_partitions == 1); a
//    partitioned module keeps it for spmd-partitioner, which reads its `sharding=`;
//  * `custom-call(x), custom_call_target="xla.sdy.FuncResultSharding"` (JAX with Shardy, on an
//    output with out_shardings), always: it states the output's sharding in Shardy syntax
//    (frontend_attributes), which JAX repeats as an HLO `sharding=` on the entry's root.
//
// Each becomes its operand. Other targets are left alone (the lowering names an unknown one).
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ShardingRemover : public HloPass {
 public:
  std::string_view name() const override { return "sharding-remover"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

/// True for a custom-call that is an identity annotation of its one operand: `Sharding` or
/// `xla.sdy.FuncResultSharding` (the CPU evaluator's table gives both the identity, whatever the
/// partitioning).
bool IsShardingAnnotation(const hlo::HloInstruction& inst);

}  // namespace tpusim::compiler
