#include "driver/host_cpu.h"

#include <memory>

#include "compiler/passes/spmd_manual.h"
#include "compiler/passes/spmd_partitioner.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace tpusim::driver {

StatusOr<std::unique_ptr<hlo::HloModule>> PartitionManualRegions(const hlo::HloModule& module) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> partitioned,
                          hlo::ParseHloModule(hlo::PrintModule(module), module.source_name()));
  TPUSIM_RETURN_IF_ERROR(compiler::SpmdPartitioner().Run(*partitioned).status());
  return partitioned;
}

StatusOr<hlo::CpuRunResult> RunOnHostCpu(const hlo::HloModule& module,
                                         const hlo::CpuRunOptions& options) {
  if (!compiler::spmd::HasManualSharding(module)) return hlo::RunModuleOnCpu(module, options);
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> partitioned,
                          PartitionManualRegions(module));
  return hlo::RunModuleOnCpu(*partitioned, options);
}

}  // namespace tpusim::driver
