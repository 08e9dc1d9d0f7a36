// spmd-partitioner: the entry point for SPMD partitioning (DESIGN.md §6). In this version it only
// TRIAGES modules; it does not rewrite them yet.
//
// Contract.
//  * num_partitions <= 1: nothing to do (returns false).
//  * Already partitioned (XLA's SPMD partitioner ran: the module contains collectives —
//    all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute — so its shapes are
//    per device): left as it is; every core runs it on its own shard (returns false).
//  * Not partitioned yet (num_partitions > 1, no collectives) and every sharding annotation is
//    {replicated} or {maximal device=d}: every partition computes the full values, which is what
//    these shardings mean, so the module runs as it is (returns false).
//  * Not partitioned yet and some instruction carries a tiled sharding (devices=[...],
//    last_tile_dim_replicate, manual): Unimplemented naming that instruction, its location and
//    its sharding — splitting shapes and inserting the collectives the math needs is not
//    implemented, and running the full-size module on every core would report the cycles of an
//    unpartitioned program, a silently wrong number.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class SpmdPartitioner : public HloPass {
 public:
  std::string_view name() const override { return "spmd-partitioner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
