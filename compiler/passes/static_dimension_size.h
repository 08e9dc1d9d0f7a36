// static-dimension-size: removes `set-dimension-size(x, n), dimensions={d}` whose size n is a
// constant equal to x's dimension d (the bound), as XLA's dynamic padder does for a size it
// proves static: the result is x, every element valid. When no source of a dynamic size is left in
// the module afterwards (set-dimension-size, a parameter or a dynamic-reshape with a `<=N`
// dimension), the `<=N` bounds its results carried become the static sizes N. A size below the
// bound (a truly dynamic shape) is left for the lowering to report ("dynamic dimensions are not
// supported").
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class StaticDimensionSize : public HloPass {
 public:
  std::string_view name() const override { return "static-dimension-size"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
