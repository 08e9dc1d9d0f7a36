// Running a module on the host CPU (the reference evaluator, hlo/eval/cpu_run.h) the one way
// `tpusim cpu`, `tpusim compare` and the Python package do.
//
// A module with GSPMD manual regions (SPMDFullToShardShape / SPMDShardToFullShape, `{manual}`
// shardings: jax.shard_map lowered through GSPMD) has no one-device meaning — a manual region is
// written per device — so it is evaluated as XLA's CPU backend would run it: partitioned by
// tpusim's SPMD partitioner (compiler/passes/spmd_partitioner.h, as `tpusim run`'s check does)
// and evaluated on every device in lockstep. Its inputs (CpuRunOptions::inputs_dir) are then each
// device's shards, `replica_<d>/param_<i>.npy`, in the partitioned program's parameter shapes.
// Any other module is evaluated as written.
#pragma once

#include <memory>

#include "common/status.h"
#include "hlo/eval/cpu_run.h"
#include "hlo/module.h"

namespace tpusim::driver {

/// A copy of `module` (which has bounded dynamic shapes: compiler::HasDynamicShapes) after
/// compiler::DynamicPadder, the static module the evaluator runs as the device does (XLA runs
/// its dynamic padder for CPU too). Errors: the padder's located Unimplemented.
StatusOr<std::unique_ptr<hlo::HloModule>> PadDynamicShapes(const hlo::HloModule& module);

/// A copy of `module` (which has manual regions: compiler::spmd::HasManualSharding) as every device
/// runs it: partitioned by compiler::SpmdPartitioner. The one place `run`'s check and the host-CPU
/// runs below get such a module. Errors: the partitioner's located Unimplemented /
/// InvalidArgument.
StatusOr<std::unique_ptr<hlo::HloModule>> PartitionManualRegions(const hlo::HloModule& module);

/// Evaluates `module` on the host CPU (hlo::RunModuleOnCpu): a module with dynamic shapes after
/// the dynamic padder, a module with manual regions after SPMD partitioning (above). Errors: those
/// of hlo::RunModuleOnCpu, the padder's located Unimplemented, and the partitioner's located
/// Unimplemented / InvalidArgument for a manual region it cannot partition.
StatusOr<hlo::CpuRunResult> RunOnHostCpu(const hlo::HloModule& module,
                                         const hlo::CpuRunOptions& options);

}  // namespace tpusim::driver
