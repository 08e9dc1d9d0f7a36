// Sharding propagation for the SPMD partitioner: gives every instruction of the ENTRY computation
// a Tiling (spmd_tiling.h), starting from the `sharding=` annotations, in the spirit of XLA's
// ShardingPropagation (xla/service/sharding_propagation.cc) but much simpler:
//
//  1. Annotated instructions keep their annotation (checked: a mesh of num_partitions devices, a
//     permutation, even cuts).
//  2. Until nothing changes: a forward pass gives an unassigned instruction the tiling its operands
//     imply, then a backward pass the tiling its users want — both only when that tiling actually
//     splits the value, so a split spreads before {replicated} leaves do.
//  3. A last forward pass takes any operand-implied tiling; what is still unassigned is
//     replicated.
//
// What an instruction's operands imply / its users want (the same rules the partitioner uses):
// elementwise ops (and copy, convert, bitcast-convert of equal widths, custom-call "Sharding") keep
// the tiling; broadcast, transpose and reshape (when a cut dimension meets a dimension at the same
// row-major position) map it; slice, pad, concatenate, reverse, dynamic-slice and
// dynamic-update-slice keep it on the dimensions they do not change (a scan's time step taken from a
// batch-split sequence stays batch-split), reduce-window and select-and-scatter on the dimensions their window does not span
// (one element, stride 1: a pooling window's batch and feature dimensions); reduce drops the
// reduced dimensions; dot and convolution map batch and free dimensions and may split the
// contracting dimensions (DotAxes below); get-tuple-element of a tuple takes the element's, and
// the element is wanted as its get-tuple-elements are (an unrolled while loop's carried values);
// gather keeps a cut of its start indices' batch dimensions on the result's batch dimensions, the
// operand whole (an embedding lookup of batch-split token ids: GatherBatchAxes below).
// Everything else is replicated.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/status.h"
#include "compiler/passes/spmd_tiling.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler::spmd {

/// The axes of a dot's tiling space D = [batch..., lhs free..., rhs free..., contracting...] for
/// each operand and result dimension. A partition holding tile (b, lf, rf, c) of D multiplies lhs
/// tile (b, lf, c) by rhs tile (b, c, rf) into a partial result tile (b, lf, rf); when the
/// contracting dimensions are cut the partial results of the partitions differing only in c are
/// summed with an all-reduce.
///
/// A convolution is the same contraction (as XLA's dot_as_convolution_util sees it):
/// D = [input batch and spatial dimensions with a one-element window (lhs free), kernel output
/// feature (rhs free), input feature (contracting)]. Its windowed spatial dimensions map to -1:
/// never cut, since a cut would need the neighbouring partitions' halo; with feature_group_count
/// > 1 the feature dimensions, with batch_group_count > 1 the batch and output feature dimensions,
/// are tied to the groups and map to -1 too. So a batch-split convolution stays batch-split, and
/// its weight gradient (the batch is then the contracting dimension) is summed by an all-reduce,
/// as in data parallelism.
struct DotAxes {
  std::vector<int64_t> lhs;          // lhs dimension -> axis of D
  std::vector<int64_t> rhs;          // rhs dimension -> axis of D
  std::vector<int64_t> out;          // result dimension -> axis of D
  std::vector<int64_t> contracting;  // axes of D that are contracting dimensions
  int64_t rank = 0;
};
/// For a kDot or kConvolution.
DotAxes MakeDotAxes(const hlo::HloInstruction& dot);

/// The tiling of D given what is known: the current tilings of the operands and the wanted tiling
/// of the result (each optional). When both operands are known and their cuts agree on a split of
/// D, that split (no operand moves; XLA's dot handler partitions such a dot as it is). Otherwise
/// the tiling that moves the fewest bytes. Candidates: both operands' cuts
/// combined (when they agree on batch and contracting cuts), the result's cuts, either operand's
/// cuts alone, and no cut; cost = bytes of operands that must be resharded + bytes of the result if
/// it must be all-reduced or resharded; ties go to the candidate with more tiles.
Tiling ChooseDotTiling(const hlo::HloInstruction& dot, const std::optional<Tiling>& lhs,
                       const std::optional<Tiling>& rhs, const std::optional<Tiling>& out,
                       int64_t num_partitions);

/// For a kGather whose operand can stay whole while its start indices are cut along their batch
/// dimensions (every dimension but index_vector_dim): result dimension -> the start-indices
/// dimension it runs over (its batch dimensions, in order), -1 for the offset (slice) dimensions.
/// Each partition then gathers the rows its own indices name from the whole operand into its
/// piece of the result, with no collective — XLA's gather handler does the same for cuts of the
/// indices' passthrough dimensions (xla/service/spmd/gather_scatter_handler.cc). nullopt for a
/// gather with operand_batching_dims (their implicit index is the global batch position, which a
/// cut would make local).
std::optional<std::vector<int64_t>> GatherBatchAxes(const hlo::HloInstruction& gather);

/// For a kScatter that can run on start indices and updates cut along their scatter (batch)
/// dimensions as a local scatter on every partition into a whole operand, followed by an
/// all-reduce with the scatter's combiner: one operand, no batching dimensions, a combiner whose
/// root is add / multiply / maximum / minimum / and / or of its two parameters, and an operand that
/// is a broadcast of a constant identity of that combiner (any value for maximum / minimum), so
/// that every partition may start from it — the gradient of an embedding lookup (a scatter-add of
/// batch-split token gradients into zeros). XLA's scatter handler partitions cut index-passthrough
/// dimensions the same way (xla/service/spmd/gather_scatter_handler.cc). Returns, per updates
/// dimension, the start-indices dimension it runs over (its scatter dimensions, in order) or -1
/// for a window dimension; nullopt otherwise.
std::optional<std::vector<int64_t>> ScatterBatchAxes(const hlo::HloInstruction& scatter);

/// True if `reduce` can be computed on cut reduced dimensions as a local reduce followed by an
/// all-reduce with the same reducer: one operand, a reducer whose root is add / multiply /
/// maximum / minimum / and / or of its two parameters, and an init value that is a constant
/// identity of that reducer (any value for maximum / minimum), so folding it in once per partition
/// changes nothing.
bool ReduceCanAllReduce(const hlo::HloInstruction& reduce);

/// True for instructions whose result is cut like their same-shaped operands: elementwise ops
/// (copy and convert included) and custom-call "Sharding".
bool KeepsTiling(const hlo::HloInstruction& inst);

/// How operand `i` of `user` must be cut for `user` to produce tiling `user_tiling` with no
/// collective: elementwise (same-shaped operands), broadcast, transpose, reshape/bitcast (nullopt
/// if the cut dimensions do not line up), reduce (reduced dimensions uncut) and gather (operand
/// whole; start indices cut along the result's batch dimensions). nullopt for dot
/// (see ChooseDotTiling) and every other opcode.
std::optional<Tiling> OperandTilingFor(const hlo::HloInstruction& user, int64_t i,
                                       const Tiling& user_tiling);

/// The result of propagation: a tiling per array-shaped instruction, per element for kTuple
/// instructions (flat tuples of arrays).
/// Instructions of manual regions (spmd_manual.h) are in `manual`, with a replicated tiling: they
/// keep their written shapes.
struct Assignment {
  std::map<const hlo::HloInstruction*, Tiling> array;
  std::map<const hlo::HloInstruction*, std::vector<Tiling>> tuple;
  std::set<const hlo::HloInstruction*> manual;
};

/// Propagates shardings over the ENTRY computation of `module` (num_partitions > 1).
/// Errors (message `file:line:col: error: %name (opcode): ...`): InvalidArgument for an annotation
/// whose mesh is not num_partitions devices, that is not a permutation, or has the wrong rank;
/// Unimplemented for a split the partitioner cannot do (an uneven cut, a tiled sharding on a tuple
/// value other than a kTuple of arrays, what ManualRegion refuses).
StatusOr<Assignment> PropagateShardings(const hlo::HloModule& module);

}  // namespace tpusim::compiler::spmd
