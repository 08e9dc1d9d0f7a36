#include "driver/host_cpu.h"

#include <memory>

#include "compiler/passes/dynamic_padder.h"
#include "compiler/passes/spmd_manual.h"
#include "compiler/passes/spmd_partitioner.h"
#include "hlo/clone.h"

namespace tpusim::driver {

StatusOr<std::unique_ptr<hlo::HloModule>> PartitionManualRegions(const hlo::HloModule& module) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> partitioned,
                          hlo::CloneModule(module));
  TPUSIM_RETURN_IF_ERROR(compiler::SpmdPartitioner().Run(*partitioned).status());
  return partitioned;
}

StatusOr<std::unique_ptr<hlo::HloModule>> PadDynamicShapes(const hlo::HloModule& module) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> padded, hlo::CloneModule(module));
  TPUSIM_RETURN_IF_ERROR(compiler::DynamicPadder().Run(*padded).status());
  return padded;
}

StatusOr<hlo::CpuRunResult> RunOnHostCpu(const hlo::HloModule& module,
                                         const hlo::CpuRunOptions& options) {
  std::unique_ptr<hlo::HloModule> padded;
  if (compiler::HasDynamicShapes(module)) {
    TPUSIM_ASSIGN_OR_RETURN(padded, PadDynamicShapes(module));
    return RunOnHostCpu(*padded, options);
  }
  if (!compiler::spmd::HasManualSharding(module)) return hlo::RunModuleOnCpu(module, options);
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> partitioned,
                          PartitionManualRegions(module));
  return hlo::RunModuleOnCpu(*partitioned, options);
}

}  // namespace tpusim::driver
