// ragged-dot (XLA's RaggedDot, jax.lax.ragged_dot: a grouped matmul, the MoE layer's expert
// matmul): the dimension numbers beyond a dot's, read from the attributes the parser keeps
// verbatim (`lhs_ragged_dims={0}`, `rhs_group_dims={0}`).
//
// The form tpusim runs (XLA's "ragged non-contracting" mode, what lax.ragged_dot writes):
// lhs [..., m, ..., k...] whose dimension `lhs_ragged` (neither batch nor contracting) is split
// into G consecutive groups of group_sizes [G] rows; rhs [..., G, ..., k..., n...] whose
// dimension `rhs_group` picks the group's matrix; no batch dimensions. Row i of group g
// (sum_{h<g} sizes[h] <= i < sum_{h<=g} sizes[h]) is the dot of lhs's row with rhs[g]; rows past
// the last group are 0. The result has the dot's shape without the group dimension.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

struct RaggedDotDims {
  int64_t lhs_ragged = 0;  // the lhs dimension the groups split
  int64_t rhs_group = 0;   // the rhs dimension that indexes the groups
};

/// The ragged dimensions of `inst` (a ragged-dot); InvalidArgument naming the instruction and
/// the form tpusim runs for any other form (a contracting or batch ragged dimension, several
/// ragged or group dimensions, batch dimensions, group_sizes not an integer [G] with G the size
/// of rhs's group dimension).
StatusOr<RaggedDotDims> GetRaggedDotDims(const HloInstruction& inst);

/// The shape of a ragged-dot(lhs, rhs, group_sizes), as XLA's InferRaggedDotOpShape: the dot
/// dimension numbers valid as a dot's; one lhs ragged dimension; in the ragged non-contracting
/// mode one rhs group dimension (neither batch nor contracting; G its size), the result the dot of
/// lhs and rhs without it; with a contracting ragged dimension no group dimension and the result
/// [G, dot...]; with a batch ragged dimension no group dimension and the dot's. group_sizes an
/// integer [G] or [lhs batch..., (lhs free dimensions before the ragged one, non-contracting
/// mode)..., G]. InvalidArgument naming the rule (no location: the verifier adds it). Which of
/// these forms tpusim runs is GetRaggedDotDims'.
StatusOr<Shape> InferRaggedDot(const HloInstruction& inst);

/// The output dimension that lhs's ragged dimension becomes.
int64_t RaggedOutputDimension(const HloInstruction& inst, const RaggedDotDims& dims);

}  // namespace tpusim::hlo
