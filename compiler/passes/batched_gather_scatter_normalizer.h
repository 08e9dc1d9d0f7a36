// batched-gather-scatter-normalizer: a `gather` with operand_batching_dims or a `scatter` with
// input_batching_dims (what JAX emits for vmapped indexing, e.g. jnp.take_along_axis) becomes the
// same op without batching dimensions, as XLA's BatchedGatherScatterNormalizer rewrites it: each
// batching dimension pair (operand dim o, indices dim s) turns into one more index component, an
// iota along s, so the index vector names o explicitly, and o joins the collapsed (gather) or
// inserted (scatter) window dimensions.
//
// Contract, for gather(operand, indices) (scatter alike, with inserted_window_dims and
// scatter_dims_to_operand_dims):
//  * index_vector_dim == rank(indices) is made explicit first (indices reshaped to [..., 1]);
//  * indices narrower than 32 bits are converted to s32 (value-preserving), so an iota up to the
//    batch size fits; wider types stay;
//  * indices' = concatenate(indices, iota_s_1, ..., iota_s_B) along index_vector_dim,
//    start_index_map' = start_index_map ++ operand_batching_dims,
//    collapsed_slice_dims' = sorted(collapsed_slice_dims ∪ operand_batching_dims), no batching
//    dimensions. The result shape and every value are unchanged (a batching index is always in
//    range, so the clamp / skip rules see the same windows).
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class BatchedGatherScatterNormalizer : public HloPass {
 public:
  std::string_view name() const override { return "batched-gather-scatter-normalizer"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
