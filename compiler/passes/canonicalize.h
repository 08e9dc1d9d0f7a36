// canonicalize: puts every dot into the one form the MXU lowering handles, and removes data
// movement that does nothing in tpusim's memory model.
//
// Contract.
//  * Requires: a module that parsed (any dot dimension numbers, any number of batch / contracting /
//    free dimensions, transposed operands).
//  * Guarantees, for every dot after the pass (every computation):
//      lhs = [B,M,K] with lhs_batch_dims={0}, lhs_contracting_dims={2}   (or [M,K], contracting
//      {1},
//            when the dot has no batch dimensions), or [B,K,M] with lhs_contracting_dims={1}
//            ([K,M] {0}) when the operand already has its contracting dimensions before its free
//            ones ("KM": the dot kernel transposes LHS blocks on the XLU in VMEM),
//      rhs = [B,K,N] with rhs_contracting_dims={1}  ("KN")  or  [B,N,K] with
//      rhs_contracting_dims={2}
//            ("NK", the MXU loads such a weight tile with load_weights transpose=1, so no XLU
//            transpose is needed); rank-2 forms [K,N] {0} / [N,K] {1} without batch dimensions;
//      result = [B,M,N] (or [M,N]); a reshape restores the original result shape when it differs.
//    Operand transposes are folded into the dimension numbers first (XLA's TransposeFolding) when
//    that keeps the order of the free dimensions; remaining reorderings become explicit
//    `transpose`s and dimension merges become `reshape`s (free in tpusim's row-major memory model).
//    The new dot keeps the original's name, metadata, location and precision config.
//  * Removes no-op data movement: reshape/bitcast to the same dimensions, and copy (tpusim stores
//    every array row-major whatever its layout, so a layout-changing copy moves no data),
//    get-tuple-element of a tuple (an inlined callee's result), and
//    transposes/reshapes/bitcasts/copies/tuples/get-tuple-elements left without users.
//  * gather / dynamic-slice with constant start indices become static slices.
//  * A broadcast along a contiguous run of middle dimensions (not the first, not the last), read
//    only by elementwise ops, becomes a broadcast into the leading dimensions (a [rows] column,
//    materialized) broadcast again along the last dimension (read as a per-row column as the
//    elementwise kernels stream: lower/hbm_plan.cc, VirtualBroadcastKind).
//  * imag of a real value becomes a broadcast 0 (XLA's algebraic simplifier; get-dimension-size
//    and dynamic-reshape of static shapes are dynamic-padder's, earlier in the pipeline).
//  * Marks a dot whose result layout puts an LHS free dimension on the lanes (the minor-most
//    dimension of size > 1) with the frontend attribute kDotStationaryLhsAttribute: XLA's TPU
//    backend computed it with the LHS as the MXU's stationary weights (lower_dot.cc takes that
//    orientation). Printed with --dump-after.
//  * Never changes values: the rewritten module computes bit-identical results on the evaluator.
#pragma once

#include <string_view>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

/// Frontend attribute canonicalize puts on a dot (value "true") whose stated result layout says
/// the MXU held its LHS stationary (see the contract above).
inline constexpr std::string_view kDotStationaryLhsAttribute = "tpusim_stationary_lhs";

/// True when canonicalize marked `dot` with kDotStationaryLhsAttribute.
bool DotHasStationaryLhs(const hlo::HloInstruction& dot);

class Canonicalize : public HloPass {
 public:
  std::string_view name() const override { return "canonicalize"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
