// sort-expander: rewrites a `sort` into a bitonic sorting network of compare-exchange stages
// (Batcher 1968) made of slices, compares, selects and concatenates, which the VPU lowering runs —
// how a sort of a whole dimension can run on a machine without scalar loops over data. The sort
// dimension (n elements) is padded to the next power of two N with keys that sort last; each of
// the log2(N)·(log2(N)+1)/2 stages pairs elements i and i XOR j in blocks of ascending and
// descending order. Keys that compare equal are ordered by their original position (an s32 iota
// carried through the network), so the result is the stable sort the evaluator computes, bit for
// bit, whatever `is_stable` says.
//
// Contract: rewritten when the comparator's root is compare(parameter 0, parameter 1), direction
// LT (ascending) or GT (descending), on operand 0's elements (the keys, f32/bf16/s32) — the keys
// are compared directly and padded with keys that sort last — or when the comparator is any
// computation of elementwise scalar ops (elementwise_computation.h: a total order through
// bitcast-convert, several keys, descending by one and ascending by another): it is applied to
// whole arrays in each compare-exchange, both ways (x < y, y < x) so ties keep their positions,
// and padding is ordered last by position. Every operand has operand 0's dimensions and is
// permuted with it; N <= 65536. Any other sort is left for the lowering to report by name. With
// the direct form, NaN keys are not supported (their order is the comparator's, which a network
// cannot reproduce).
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class SortExpander : public HloPass {
 public:
  std::string_view name() const override { return "sort-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
