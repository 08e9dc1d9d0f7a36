// The verifier's device-id rules, as XLA's HloVerifier applies them (CheckReplicaGroups,
// collective-permute's source_target_pairs, VerifyChannels, sharding validation): every replica
// group, source-target pair and sharding names devices that exist, once. Part of VerifyModule.
#pragma once

#include <string_view>

#include "common/status.h"
#include "hlo/module.h"

namespace tpusim::hlo {

/// The number of devices the module declares: replica_count x num_partitions; 0 when both are 1
/// (absent), in which case tpusim infers the count from the ids (InferDeviceCount) and only
/// kMaxDevices bounds them.
int64_t DeclaredDeviceCount(const HloModule& module);

/// Ok, or InvalidArgument `file:line:col: error: '%name' (opcode): ...` for the first of: an empty
/// replica group; a device id below 0, at or above the declared device count, or at or above
/// kMaxDevices; a device twice in one instruction's replica groups; a collective-permute source or
/// target named twice; two kinds of instruction sharing one channel_id (send/recv and their -done
/// ops count as one kind); a `{maximal device=D}` or tiled sharding naming a device outside those
/// bounds.
Status VerifyDeviceIds(const HloModule& module, std::string_view source_text);

}  // namespace tpusim::hlo

namespace tpusim::hlo {

/// `status` (an error about the module's device count, e.g. "1000001 devices need ... cores")
/// located at the instruction that names the module's largest device id when that id, not
/// replica_count x num_partitions, sets the count (InferDeviceCount): "file:line:col: error:
/// '%ar' (all-reduce) names device 1000000: ...". `status` unchanged otherwise (also when ok).
Status LocateDeviceCountError(const HloModule& module, Status status);

/// The devices (one TensorCore each: replicas x partitions) a run of `module` configures: `requested`
/// (--replicas, counting every device) when > 0, else InferDeviceCount — replica_count x
/// num_partitions (num_partitions also from a Shardy mesh, which the parser reads), raised to the
/// largest device id a replica group or collective-permute pair names. The driver's runs
/// (driver/device_slice.h), `tpusim compile` and compiler::Compile all count here.
/// Errors: InvalidArgument "FILE: --replicas N: ..." for `requested` < 0, or not a multiple of the
/// module's num_partitions (every replica runs all of its partitions).
StatusOr<int64_t> DevicesToRun(const HloModule& module, int64_t requested);

}  // namespace tpusim::hlo
