// all-reduce-combiner: independent all-reduces of arrays with the same replica groups, channel-id
// kind and reduction are merged into one tuple all-reduce, as XLA's AllReduceCombiner does before
// a TPU/GPU program runs (xla/service/all_reduce_combiner.h). The lowering then runs one ring per
// element type for the whole tuple (lower_collective.cc), so the ring's 2(n-1) hop latencies are
// paid once instead of once per gradient — what a data-parallel step over many small parameters
// costs on a real TPU. Dumps taken after XLA's optimizations are already combined; this pass
// matters for the before-optimization dumps PyTorch/XLA and JAX users usually have.
//
// Contract.
//  * Candidates: all-reduce instructions of the entry computation with one array operand and an
//    array result; a reduction whose root is add, maximum or minimum.
//  * Buckets of equal key (replica_groups, channel_id present or not, use_global_device_ids,
//    reduction opcode, result element type, innermost loop region of compiler/passes/loop_region.h:
//    a region's all-reduces run once per trip, the others once) are formed in text order: a
//    candidate joins when it does not depend (transitively) on any member and the bucket stays
//    within `threshold_bytes` (default 30 MiB: XLA's xla_gpu_all_reduce_combine_threshold_bytes;
//    TPU's is unpublished, assumption). One bucket is merged at a time — a tuple all-reduce plus
//    one get-tuple-element per member — and the computation is re-sorted topologically (ready
//    instructions in their old text order; the merged all-reduce where the bucket's last member
//    was), so later buckets see the new dependencies and no cycle can form.
//  * Values do not change: an all-reduce is elementwise across replicas.
#pragma once

#include <cstdint>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class AllReduceCombiner : public HloPass {
 public:
  explicit AllReduceCombiner(int64_t threshold_bytes = int64_t{30} << 20)
      : threshold_bytes_(threshold_bytes) {}
  std::string_view name() const override { return "all-reduce-combiner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  int64_t threshold_bytes_;
};

}  // namespace tpusim::compiler
