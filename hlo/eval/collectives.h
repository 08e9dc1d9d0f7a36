// Cross-device semantics of HLO collectives for the lockstep evaluator (evaluator.h).
//
// Devices are numbered by XLA's flattened id d = replica * num_partitions + partition. Which
// devices form a group follows XLA's CollectiveOpGroupMode (xla/service/collective_ops_utils.h,
// GetCollectiveOpGroupMode and GetParticipatingDevices):
//   - no channel_id                       -> cross-replica: replica_groups list replica ids; each
//   group is
//                                           formed separately within every partition.
//   - channel_id, !use_global_device_ids  -> cross-replica-and-partition: replica_groups list
//   replica ids;
//                                           a group holds those replicas in every partition (order:
//                                           partition-major, then the listed replica order).
//   - channel_id, use_global_device_ids   -> flattened ids: replica_groups list flattened device
//   ids.
//   - replica_groups={} means one group of all replicas (all devices for flattened ids); the iota
//   form
//     `[G,S]<=[N]...` gives G groups of S (sharding.h ExpandReplicaGroups).
//   - collective-permute: source_target_pairs are replica ids within each partition without
//   channel_id,
//     partition ids within each replica with one (cross-partition, as SPMD emits them).
// Group order defines all-gather concatenation order, which reduce-scatter shard a device keeps
// (its position) and all-to-all chunk routing. Reductions fold the group's values in group order.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

struct DeviceGrid {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t size() const { return replicas * partitions; }
};

/// The groups of flattened device ids of a collective (see file comment). InvalidArgument if an id
/// is out of range or a device is in two groups.
StatusOr<std::vector<std::vector<int64_t>>> CollectiveGroups(const HloInstruction& instruction,
                                                             const DeviceGrid& grid);

/// Evaluates all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute,
/// collective-broadcast and their -start forms for the `devices` being evaluated. operands[i] are
/// device devices[i]'s operand values; returns one result per entry of `devices`, of `result_shape`
/// (the collective's own result: for the tuple-shaped -start forms, the caller passes the result
/// element and wraps it). Every member of a group must be in `devices` (else InvalidArgument: a
/// collective inside a branch only some devices took).
StatusOr<std::vector<Literal>> EvaluateCollective(
    const HloInstruction& instruction, const DeviceGrid& grid, const std::vector<int64_t>& devices,
    const std::vector<std::vector<const Literal*>>& operands, const CalledComputation* reducer,
    const Shape& result_shape, const KernelOptions& options);

}  // namespace tpusim::hlo
