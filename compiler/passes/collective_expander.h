// collective-expander: rewrites collectives the ICI lowering does not take directly into ones it
// does.
//
//  * all-gather / reduce-scatter along dimension d that is not outermost (a dimension before d has
//    size > 1): the operand is transposed so d comes first, the collective runs along dimension 0,
//    and the result is transposed back. Values are exact; the two transposes cost HBM traffic that
//    XLA's TPU backend avoids with strided DMAs (a known pessimism of this expansion).
//  * all-to-all (array form, split/concat dimension d; or tuple form, one operand per participant)
//    in groups of N: N-1 rounds of collective-permute, round k sending to the participant k ranks
//    ahead the chunk it needs and placing the chunk received from k ranks behind — the pairwise
//    exchange schedule all-to-all uses on a torus. Each device moves (N-1)/N of its data over ICI,
//    as the real all-to-all does. A device's rank in its group is read from a constant table
//    indexed by its global id, replica-id * num_partitions + partition-id.
//  * collective-broadcast of one array in groups of one size that cover every replica: an
//    all-gather along a new dimension 0 of which every member keeps row 0, its group's first
//    member's value (the source). Exact; the all-gather moves N - 1 rows to each member where a
//    broadcast moves one (a pessimism of this expansion).
//
// Errors: none; collectives outside this contract are left for the lowering to report by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class CollectiveExpander : public HloPass {
 public:
  std::string_view name() const override { return "collective-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
