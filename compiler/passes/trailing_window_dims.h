// trailing-window-dims: puts a gather's offset dimensions and a scatter's update window dimensions
// last, the form the DMA lowering runs (lower_gather.cc: the batch / scatter dimensions first, the
// window last), as XLA's GatherSimplifier and ScatterSimplifier canonicalize them. `x[:, ids]`
// (jnp.take(x, ids, axis=1), torch.index_select(x, 1, ids)) gathers with offset_dims={0,2}.
//
// Contract:
//  * gather with offset_dims O not the last |O| result dimensions: a gather of the same operands
//    whose result is [batch dims in order, offset dims in order] (offset_dims' = the trailing
//    ones), then a transpose back to the original result; values unchanged;
//  * scatter with update_window_dims W not the last |W| update dimensions: every update is
//    transposed to [scatter dims in order, window dims in order] (update_window_dims' = the
//    trailing ones); the result and values unchanged.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class TrailingWindowDims : public HloPass {
 public:
  std::string_view name() const override { return "trailing-window-dims"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
