// variadic-scatter-splitter: a `scatter` of N > 1 operands whose combiner treats each operand
// separately — result element k of the combiner's tuple computed only from parameters k (the
// operand's current value) and N + k (the update) — is N independent scatters sharing the indices,
// which is how XLA defines it element by element. Each becomes a one-operand scatter with its own
// two-parameter combiner (the combiner's ops for element k, cloned), and a tuple of them replaces
// the variadic one; the lowering runs one-operand scatters on the DMA engines (lower_gather.cc).
//
// Contract: values unchanged. A variadic scatter whose combiner mixes operands (element k reading
// parameter j for another operand j != k, e.g. a scatter that keeps the value with the larger key)
// is left as it is, and the lowering refuses it by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class VariadicScatterSplitter : public HloPass {
 public:
  std::string_view name() const override { return "variadic-scatter-splitter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
