// zero-sized-hlo-elimination (XLA's ZeroSizedHloElimination): an instruction whose result is an
// array with no elements (a dimension of size 0) becomes a constant of that shape with no values.
//
// Why: such arrays are valid HLO (a batch of 0, a ragged-dot of 0 groups, the digit dots the
// integer-dot-expander makes of them), and every element the lowering would tile, broadcast or
// gather is one that does not exist: the lowering's tile arithmetic divided by a zero extent
// (SIGFPE in the broadcast's gather kernel, SIGSEGV in the dot's loads; issue 21 round six). XLA
// removes them before its backends see them; so does tpusim, after canonicalize.
//
// Contract. Every array-shaped instruction with zero elements of every computation becomes a
// kConstant of its shape (the evaluator's and the device's result: nothing), keeping its name,
// location and metadata, except parameters, constants, and the instructions whose effect is not
// their value: custom-calls (a Pallas kernel's declared cost), collectives and their -start/-done
// halves, send/recv, infeed/outfeed, rng and the control-flow calls (while, call, conditional,
// fusion). Tuple-shaped results are left (their zero-sized elements are read through
// get-tuple-element, which is replaced). Returns whether anything changed.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ZeroSizedHloElimination : public HloPass {
 public:
  std::string_view name() const override { return "zero-sized-hlo-elimination"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
