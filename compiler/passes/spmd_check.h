// The value check of an SPMD-partitioned module: for every partition, the outputs of the
// PARTITIONED module (evaluated on all partitions in lockstep, collectives included) must equal the
// corresponding shard of the UNPARTITIONED module's output (evaluated on one device). Shards are
// read from the partitioned module's own `sharding=` annotations (SpmdPartitioner leaves one on
// every ENTRY parameter and on the root; a missing annotation means replicated), so the same
// functions serve modules XLA partitioned, as long as their shards are even.
//
// How `tpusim run` uses it (replica r, partition p of num_partitions N; core d = r * N + p), with
// `sig` the SpmdSignature of the module Compile's pipeline partitioned:
//   full_args[r] = Evaluator::MakeRandomArguments(unpartitioned, seed, r)
//   full_out[r]  = Evaluator::Evaluate(unpartitioned, full_args[r])     (one device)
//   inputs of core d   = ShardArguments(sig, full_args[r], p)          (written to its HBM)
//   expected of core d = ExpectedPartitionOutput(sig, full_out[r], p)  (its outputs must match)
// CheckPartitionedModule does both halves on the evaluator alone (no simulator).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/passes/spmd_partitioner.h"
#include "hlo/eval/literal.h"
#include "hlo/module.h"
#include "hlo/sharding.h"

namespace tpusim::compiler {

/// The piece of `full` (an array or a tuple of arrays) partition `partition` holds under
/// `sharding` (a tuple sharding for a tuple: one element per tuple element) in a module with
/// `num_partitions` partitions. InvalidArgument for a bad sharding (spmd_tiling.h rules) or a
/// tuple/array mismatch; Unimplemented for uneven cuts and manual shardings.
StatusOr<hlo::Literal> ExtractShard(const hlo::Literal& full, const hlo::HloSharding& sharding,
                                    int64_t num_partitions, int64_t partition);

/// Partition `partition`'s ENTRY arguments from the full-size arguments of the unpartitioned
/// module (one per ENTRY parameter), each cut by its parameter's sharding in `signature`.
/// InvalidArgument on a count mismatch.
StatusOr<std::vector<hlo::Literal>> ShardArguments(const SpmdSignature& signature,
                                                   const std::vector<hlo::Literal>& full_args,
                                                   int64_t partition);
/// As above with SpmdSignature::Of(partitioned), and each piece checked against the partitioned
/// parameter's shape (InvalidArgument naming the parameter on a mismatch).
StatusOr<std::vector<hlo::Literal>> ShardArguments(const hlo::HloModule& partitioned,
                                                   const std::vector<hlo::Literal>& full_args,
                                                   int64_t partition);

/// What partition `partition` must output: `full_output` (the unpartitioned module's result) cut
/// by the result's sharding in `signature`.
StatusOr<hlo::Literal> ExpectedPartitionOutput(const SpmdSignature& signature,
                                               const hlo::Literal& full_output, int64_t partition);
/// As above with SpmdSignature::Of(partitioned), checked against the partitioned root's shape.
StatusOr<hlo::Literal> ExpectedPartitionOutput(const hlo::HloModule& partitioned,
                                               const hlo::Literal& full_output, int64_t partition);

struct SpmdCheckOptions {
  uint64_t seed = 0;
  /// |got - want| <= atol + rtol * |want| per element. Partitioned sums add in another order (a
  /// partial dot per partition, then the all-reduce), so f32 results differ by rounding.
  double atol = 1e-5;
  double rtol = 1e-5;
  bool tpu_default_precision = false;  // EvaluatorOptions::tpu_default_precision
};

struct SpmdCheckResult {
  int64_t replicas = 0;
  int64_t partitions = 0;
  int64_t elements_compared = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  std::string first_mismatch;  // "replica 0 partition 1 output 0 element 17: got 0.5, want 0.25"
  bool passed() const { return mismatches == 0 && elements_compared > 0; }
};

/// Evaluates `unpartitioned` on its replica_count replicas (one device each, arguments
/// MakeRandomArguments(seed, replica)) and `partitioned` on replica_count x num_partitions devices
/// fed the shards of the same arguments, and compares every device's output with its shard of its
/// replica's full output. Errors: evaluation errors, shape mismatches between the two modules, and
/// the ExtractShard errors; a numerical mismatch is not an error (see SpmdCheckResult).
StatusOr<SpmdCheckResult> CheckPartitionedModule(const hlo::HloModule& unpartitioned,
                                                 const hlo::HloModule& partitioned,
                                                 const SpmdCheckOptions& options = {});

}  // namespace tpusim::compiler
