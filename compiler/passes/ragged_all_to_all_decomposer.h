// ragged-all-to-all-decomposer: `ragged-all-to-all(input, output, input_offsets, send_sizes,
// output_offsets, recv_sizes)` (JAX's jax.lax.ragged_all_to_all, mixture-of-experts token routing)
// becomes a dense all-to-all and masked selects, as XLA's GPU RaggedAllToAllDecomposer
// (xla/service/gpu/transforms/ragged_all_to_all_decomposer.cc) rewrites it where no ragged
// transfer is native:
//  * each member cuts, per peer k, the R rows starting at input_offsets[k] (R = the input's rows;
//    the input is padded with R zero rows so every start fits) and stacks them [n, R, ...];
//  * an all-to-all along dimension 0 (same replica groups) delivers slot j from member j, and one
//    of output_offsets delivers each sender's offset into this member's output;
//  * for each sender j, rows [offset_j, offset_j + recv_sizes[j]) of the result are its slot's
//    first rows, shifted into place by a dynamic-slice; every other row keeps `output`.
// Values are XLA's semantics (checked against the evaluator). Bytes are not: every member sends n
// slots of R rows where a TPU's ragged transfer sends send_sizes[k] rows to peer k — an upper bound
// on the ICI traffic, written in docs/codegen.md. Offsets and sizes outside the buffers give
// XLA's undefined behaviour here as there (dynamic-slice clamps); the evaluator refuses them.
// Errors: a located Unimplemented for groups of unequal size or offsets not [group size].
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class RaggedAllToAllDecomposer : public HloPass {
 public:
  std::string_view name() const override { return "ragged-all-to-all-decomposer"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
