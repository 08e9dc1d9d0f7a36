// topk-expander: rewrites `topk(x), k=K, largest=L` (x: [..., n]) into a stable sort of (x, iota
// along the last dimension) by x, descending for largest=true (ascending otherwise), followed by
// slices of the first K columns — XLA's TopkDecomposer. The sort then goes through sort-expander.
// Result: tuple([..., K] values, s32[..., K] indices); ties keep the lower index first.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class TopKExpander : public HloPass {
 public:
  std::string_view name() const override { return "topk-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
