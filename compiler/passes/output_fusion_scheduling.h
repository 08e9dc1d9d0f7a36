// output-fusion-scheduling: schedules the instructions a dot's or convolution's output fusion needs
// next to it, so the lowering can run the fusion's elementwise consumers on each result block as it
// is popped (lower/fusion.h, AddDotEpilogues) — XLA's kOutput fusion, which places the dot or
// convolution and its elementwise consumers in one kernel however the ops were ordered in the
// module.
//
// For each dot and convolution D of the entry computation, the next instructions (at most 64) are
// walked in program order and sorted into three lists: those independent of D (none of their
// operands depends on D, transitively: a convert or broadcast of a bias, a constant), its fusible
// consumers (elementwise ops of D's result dimensions whose operands are D, earlier fusible
// consumers or independent values; or of the dimensions of a view of D — a reshape or bitcast with
// D's elements and last dimension, e.g. canonicalize's result reshape of a batched dot — with the
// view itself), and the rest (a reduce of D's result and everything after
// it that depends on such an instruction). The new order is: the independent ones, D, the
// fusible consumers, the rest — each list in its original order. The walk stops at a
// loop-region marker (passes/loop_region.h) and at collectives, which are never moved.
//
// Loop fusions (XLA's kLoop: a chain of elementwise ops of one shape with the small ops feeding its
// broadcasts) are scheduled the same way: for an elementwise op E whose window holds elementwise
// consumers of E's dimensions and, between them, independent instructions of other dimensions (a
// convert of a [C] scale feeding a broadcast), those independent instructions move before E, so
// the chain is one run of the lowering's elementwise fusion (lower/fusion.h) instead of several;
// the window's other instructions keep their places (a dot or convolution among them still gets its
// own window).
//
// One sweep over the entry computation, O(instructions x 64): a dot or convolution that an earlier
// one's window already placed (a deferred instruction) keeps that place.
//
// Contract: values are unchanged (only the order of independent instructions changes, and it
// stays a topological order). Requires canonical dots and lowered convolutions (it runs last).
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class OutputFusionScheduling : public HloPass {
 public:
  std::string_view name() const override { return "output-fusion-scheduling"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
