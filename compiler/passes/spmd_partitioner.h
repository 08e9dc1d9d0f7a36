// spmd-partitioner: rewrites a module whose instructions carry `sharding=` annotations but whose
// shapes are still full-size into the program every partition runs (DESIGN.md §6), the job of
// XLA's SpmdPartitioner (xla/service/spmd/spmd_partitioner.cc), on the ENTRY computation.
//
// Contract.
//  * num_partitions <= 1: nothing to do (returns false).
//  * Already partitioned: the module contains collectives (XLA's partitioner ran, shapes are per
//    device) or its ENTRY computation is named "*_spmd" (XLA's and this pass's mark). Left as it
//    is (returns false).
//  * Every annotation {replicated} / {maximal device=d} (or none): every partition computes the
//    full values, which is what these shardings mean. Left as it is (returns false).
//  * Otherwise shardings are propagated to every ENTRY instruction (spmd_propagation.h); each
//    instruction is rewritten in place to its per-partition shape and the collectives the math
//    needs are inserted as HLO instructions:
//      - all-reduce over the partitions holding different pieces of a cut contracting dimension
//        (dot; convolution's input feature, e.g. the batch of a weight gradient) or a cut reduced
//        dimension (reduce, same reducer), inserted before the first user;
//        reduce-scatter instead when every user wants the sum cut along one more dimension;
//      - all-gather (one per cut dimension) where a user needs the whole value or another cut;
//        collective-permute where a user wants the same cut on other partitions;
//      - a whole value read by a split user: each partition takes its piece locally, chosen by
//        partition-id (SpmdPartitionerOptions::LocalSlice).
//    Collectives get fresh channel_ids (above any in the module), use_global_device_ids=true and
//    replica_groups of flattened ids replica * num_partitions + partition, as XLA writes them.
//    ENTRY parameters take their piece's shape (each partition receives its shard) and keep a
//    sharding= annotation; the root carries the result's sharding (SpmdSignature reads both);
//    other annotations, and custom-call "Sharding" constraints, are removed; the ENTRY
//    computation is renamed "<name>_spmd". spmd_check.h checks the result on the evaluator.
//  * Manual regions (SPMDFullToShardShape ... sharding={manual} ... SPMDShardToFullShape: a
//    jax.shard_map lowered with GSPMD) run as written on every partition, their collectives with
//    the groups written in them; the two custom-calls become views of the values around the region
//    (spmd_manual.h). A module with a manual region is partitioned even though it has collectives.
//  * Errors (`file:line:col: error: %name (opcode): ...`): InvalidArgument for a tile assignment
//    that is not a mesh of num_partitions devices, not a permutation, or of the wrong rank;
//    Unimplemented for what the partitioner cannot split (uneven cuts, partially manual shardings
//    that also cut values (spmd_manual.h), splits in
//    non-ENTRY computations, split tuple values other than tuple(...), split tuple operands of
//    control flow, num_partitions > kMaxSpmdPartitions). The module is unchanged on error.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/pass/hlo_pass.h"
#include "hlo/module.h"
#include "hlo/sharding.h"

namespace tpusim::compiler {

struct SpmdPartitionerOptions {
  /// How a partition takes its piece of a value every partition holds whole.
  enum class LocalSlice {
    /// One static slice per distinct piece, the partition's own chosen by select on
    /// compare(partition-id, p): static ops only; costs one slice per piece plus
    /// (pieces - 1) selects of piece size, all local.
    kSelectSlices,
    /// XLA's way (the default): partition-id indexes constant tables of offsets, then one
    /// dynamic-slice (an indirect DMA on the chip).
    kDynamicSlice,
  };
  LocalSlice local_slice = LocalSlice::kDynamicSlice;
};

/// The most partitions SpmdPartitioner splits a module into (a TPU v4 pod has 4096 chips); more is
/// Unimplemented, so hostile input cannot ask for a billion-entry device table.
inline constexpr int64_t kMaxSpmdPartitions = 16384;

/// How the ENTRY parameters and the result of a partitioned module are cut: what a driver needs
/// to give each partition its shard of the arguments and to check its shard of the result
/// (spmd_check.h). Read from the `sharding=` annotations SpmdPartitioner leaves on the ENTRY
/// parameters and root (a missing annotation is {replicated}).
struct SpmdSignature {
  int64_t num_partitions = 1;
  std::vector<hlo::HloSharding> parameters;  // one per ENTRY parameter
  hlo::HloSharding result;                   // kTuple with one element per leaf for a tuple root
  static SpmdSignature Of(const hlo::HloModule& partitioned);
};

/// True if SpmdPartitioner would rewrite `module` (num_partitions > 1, not yet partitioned, some
/// annotation splits a value): then the module's arguments and results are full-size and each
/// partition takes its shard (spmd_check.h).
bool NeedsSpmdPartitioning(const hlo::HloModule& module);

class SpmdPartitioner : public HloPass {
 public:
  explicit SpmdPartitioner(SpmdPartitionerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "spmd-partitioner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  SpmdPartitionerOptions options_;
};

}  // namespace tpusim::compiler
