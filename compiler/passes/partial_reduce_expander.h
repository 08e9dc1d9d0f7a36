// partial-reduce-expander: rewrites the TPU custom-call PartialReduce (approx_max_k /
// approx_min_k's first stage, hlo/partial_reduce.h) into standard HLO the lowering runs:
//   x_i [.., n, ..] -> pad dimension d at the end with init_i to L * 2^R (when n is shorter)
//   -> reshape to [.., 2^R, L, ..] (element m * L + j at [m, j]) -> one variadic reduce of all
//   x_i over the 2^R dimension, from init_i, whose reducer is the comparator made a selection:
//   (acc..., x...) -> cmp(acc_1, x_1, acc_2, x_2, ...) ? acc : x (XLA's
//   BuildReductionComputation, xla/hlo/builder/lib/approx_topk.cc).
// The reduce then goes through variadic-reduce-expander (a tree of the reducer), so this pass runs
// before it. Bins that tie under the comparator may keep another element than the evaluator's
// in-order fold (hlo/eval/kernels/partial_reduce.h); XLA leaves the order unspecified too.
// A PartialReduce whose form GetPartialReduceForm refuses is a located error.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class PartialReduceExpander : public HloPass {
 public:
  std::string_view name() const override { return "partial-reduce-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
