// Elementwise fusion for the lowering (DESIGN.md §5 "elementwise chains: fused onto the VPU"): runs
// of elementwise ops of one shape, consecutive in program order, become one kernel that streams its
// external operands through VMEM once and keeps the intermediates there, storing only the values
// used outside the run. XLA's kLoop fusion in spirit; formed here rather than as an HLO `fusion`
// because the lowering, not the IR, decides what stays in VMEM. The ops right after a dot can
// instead run on its result blocks as they are popped (AddDotEpilogues).
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/module.h"

namespace tpusim::compiler {

struct ElementwiseGroups {
  /// Groups of >= 2 members, each in program order.
  std::vector<std::vector<const hlo::HloInstruction*>> groups;
  /// Member -> index into `groups`.
  std::map<const hlo::HloInstruction*, size_t> group_of;
  /// Dot epilogues (AddDotEpilogues): the elementwise ops a dot runs on each result block as it is
  /// popped, in program order, and the dot of each such op.
  std::map<const hlo::HloInstruction*, std::vector<const hlo::HloInstruction*>> epilogue_of_dot;
  std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> dot_of_epilogue;
  /// Dot prologues (AddDotPrologues): per dot and operand (0: the LHS, 1: the weights), the
  /// elementwise ops that compute the operand, in program order, and the dot of each such op.
  std::map<std::pair<const hlo::HloInstruction*, int>, std::vector<const hlo::HloInstruction*>>
      prologue_of_dot;
  std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> dot_of_prologue;
};

/// Forms the groups of the entry computation. A group is a maximal run of elementwise ops with a
/// VPU function and the same result dimensions; instructions without code (parameters, constants,
/// tuples, aliases, virtual broadcasts) in between do not end it, anything else does. An op joins
/// only if none of its non-member operands is an alias of a member, or a get-tuple-element of a
/// tuple holding one (it would read HBM the group has not written yet). At most `max_members` per
/// group (VMEM holds every member's chunk).
ElementwiseGroups FormElementwiseGroups(const hlo::HloModule& module, size_t max_members = 16);

/// Pop-time fusion (DESIGN.md §5 "elementwise fusion applied as MXU results are popped"; XLA's
/// kOutput fusion of a dot or convolution with its consumers): a dot (or a direct convolution,
/// whose [N, OH, OW, O] result is popped as blocks of an [N*OH*OW, O] matrix) whose next kernel in
/// program order is an elementwise op (or a group of them) of the dot's result dimensions that
/// reads the dot runs that op or group on each [Mc, Nc] result block in VMEM as it is popped,
/// before storing it; the ops' other operands are scalars, per-column vectors (a bias), per-row
/// vectors or arrays of the same dimensions, all defined before the dot, and the dot's own result
/// is stored only if something else reads it. Dots with N >= `min_split_n` (split over a megacore's
/// TensorCores) keep their ops separate. The HBM plan treats the ops as defined at the dot.
/// The ops may compute on a view of the result instead — a reshape with the same elements in the
/// same row-major order and the same last dimension (the canonical [B, M, N] dot read as the
/// module's [b0, b1, m0, m1, N] result) — and read broadcasts of a small operand along a prefix of
/// their dimensions whose every value covers whole batches of the dot (a per-example mask): those
/// broadcasts join the epilogue and are never materialized (IsEpilogueBatchBroadcast).
void AddDotEpilogues(const hlo::HloModule& module, int64_t min_split_n, ElementwiseGroups* groups);

/// Elements of `dot`'s result per canonical batch: M * N of an [B, M, N] dot; every element of a
/// rank-2 dot or of a direct convolution's result (popped as one [N*OH*OW, O] matrix).
int64_t EpilogueElementsPerBatch(const hlo::HloInstruction& dot);

/// True for a broadcast of an operand of >= 2 elements along the leading dimensions of its result
/// (`dimensions={0, .., p-1}`), with `dot`'s element count, whose every operand value covers a
/// whole number of `dot`'s batches (EpilogueElementsPerBatch): in an epilogue each popped block
/// reads one value of it.
bool IsEpilogueBatchBroadcast(const hlo::HloInstruction& b, const hlo::HloInstruction& dot);

/// Operand fusion (XLA's kOutput fusion of a dot with the producers of its operands: "scale and
/// bias applied as the operand tile is loaded"): the elementwise ops that compute a canonical dot's
/// LHS ([B,M,K]) or weights ([B,K,N]) and are read by nothing else run on each operand block as
/// it is loaded into VMEM (lower/dot_prologue.cc), so the operand itself never goes through HBM.
/// A member has the operand's dimensions and all its users inside the prologue (the dot for the
/// last); its other operands are scalars, virtual broadcasts along the rows or the columns, or
/// arrays of the operand's dimensions (loaded block by block). Elementwise groups must lie wholly
/// inside a prologue or outside it. Dots with N >= `min_split_n` (split over a megacore) and
/// operands in the KM / NK forms (transposed as they are loaded) keep their producers' kernels.
void AddDotPrologues(const hlo::HloModule& module, int64_t min_split_n, ElementwiseGroups* groups);

/// Operand fusion of a convolution in the filter-gradient form (hlo/convolution_form.h,
/// FilterGradientConvolution; the weight gradient of a convolution layer): the elementwise ops that
/// compute its input X [F, H, W, B] (a batch-norm's scale and shift of the activations) or its
/// output gradient G [F, KH, KW, O] run on each band as it is loaded into VMEM, with the same rules
/// as AddDotPrologues (X and G seen as the matrices [F*H*W, B] and [F*KH*KW, O]).
/// `mxu_rows`: core.mxu.rows, which the form's K tiles follow.
void AddConvPrologues(const hlo::HloModule& module, int64_t mxu_rows, ElementwiseGroups* groups);

/// The fusion decisions as text (`--dump-after fusion`), one kernel per line in program order, with
/// XLA's fusion kinds: `kLoop` (an elementwise run), `kInput` (a run ending in its reduce),
/// `kOutput` (a dot or convolution with the ops run on its popped blocks, and with the producers of
/// its operands run as the blocks are loaded).
std::string DescribeFusions(const hlo::HloModule& module, const ElementwiseGroups& groups);

}  // namespace tpusim::compiler
