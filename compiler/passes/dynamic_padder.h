// dynamic-padder: bounded dynamic shapes (`f32[<=N]`) become static shapes of their bound, as
// XLA's DynamicPadder (xla/service/dynamic_padder.cc, with dynamic_dimension_inference.cc) makes
// them before every backend's code generation, CPU's included.
//
// A dynamic dimension is a buffer of its bound N whose first `size` elements are valid; the size
// is an s32[] value the program computes. The pass follows each dynamic dimension's size from
// where it is set to where it is read:
// - `set-dimension-size(x, n), dimensions={d}` becomes x, with size clamp(0, n, N) for d (XLA
//   leaves a size outside [0, N] undefined; tpusim clamps it, an assumption written here);
//   `get-dimension-size(x), dimensions={d}` becomes that size (N for a static dimension);
// - the custom-calls XLA's own padder writes where dynamic code meets static code (dumps after
//   XLA's optimization): `SliceToDynamic(data, size_0, ..., size_{r-1})` becomes data with the
//   clamped size of each dimension its result marks `<=`, `PadToStatic(x)` becomes tuple(x, the
//   size of each dimension of x) (XLA: xla/service/dynamic_padder.cc; the padding of its data
//   holds what x's buffer holds, undefined in XLA);
// - sizes pass through elementwise ops, broadcast, transpose, copy, slice and concatenate along
//   other dimensions, a reshape of a dynamic major dimension (the valid elements are a prefix of
//   the buffer), dot batch and free dimensions, reduce's kept dimensions, and dynamic-reshape whose
//   only dynamic dimensions are the major ones of its operand and result;
// - where padding would change a value it is masked first, as XLA's padder does: a reduce over a
//   dynamic dimension reads its init value in the padding, a dot contracting a dynamic dimension
//   reads zeros there; an output of the entry computation reads zeros in its padding (XLA leaves
//   them undefined; zeros make outputs comparable and printable).
// An entry parameter's `<=N` dimension has size N (its value is the whole array tpusim is given).
// Dynamic sizes reaching any other op, or made inside a called computation, are a located
// Unimplemented error naming the op. The pass is also the one place a static module's size ops
// go (in every computation): get-dimension-size of a static dimension becomes its constant size,
// dynamic-reshape to a static shape a reshape, set-dimension-size to the bound its operand.
// Afterwards every shape of the module is static.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class DynamicPadder : public HloPass {
 public:
  std::string_view name() const override { return "dynamic-padder"; }
  /// Errors: located Unimplemented for a dynamic size reaching an op the padder does not handle.
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

/// Whether any shape of `module` has a bounded dynamic (`<=N`) dimension: such a module runs (on
/// the device and on the evaluator alike) after DynamicPadder.
bool HasDynamicShapes(const hlo::HloModule& module);

}  // namespace tpusim::compiler
