// ragged-dot-rewriter: ragged-dot (jax.lax.ragged_dot, a grouped matmul; hlo/ragged_dot.h) becomes
// a dense dot, as XLA's RaggedDotRewriter (xla/hlo/transforms/expanders/ragged_dot_rewriter.cc)
// does for backends without a grouped-matmul kernel:
//   ends[g] = sum_{h <= g} max(sizes[h], 0), starts[g] = ends[g] - max(sizes[g], 0)  ([G, G]
//   masked sum: G is small); dense [G, lhs...] = lhs where starts[g] <= i < ends[g] along the
//   ragged dimension, else 0; result = dot(dense, rhs) contracting G with rhs's group dimension
//   and the original contracting dimensions.
// Values: each row's non-zero products are those of its group, so the result equals the ragged
// dot's up to the order of the f32 sums (the zeros add nothing). Time: the dense dot does G times
// the MACs of XLA's TPU grouped matmul (whose row tiles follow the group sizes), so a simulated
// ragged-dot is an upper bound on a TPU's by up to that factor — an assumption until tpusim has a
// data-dependent grouped matmul. Forms other than hlo::GetRaggedDotDims's (a contracting or batch
// ragged dimension, batch dimensions) are a located Unimplemented error naming what runs.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class RaggedDotRewriter : public HloPass {
 public:
  std::string_view name() const override { return "ragged-dot-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
