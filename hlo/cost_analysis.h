// FLOP and bytes-accessed counts in the way XLA's HloCostAnalysis counts them
// (xla/service/hlo_cost_analysis.cc), on symbolic shapes — nothing is allocated, so modules with
// f32[1024,32,4096,4096] tensors are fine. Counts are doubles: a large dot can exceed 2^63 FLOP.
//
// Per instruction:
//   - elementwise (unary/binary/ternary, incl. compare, select, clamp, convert): 1 FLOP per output
//     element; the transcendental ones (opcode.h IsTranscendental) count 1 transcendental instead.
//     copy moves bytes only.
//   - dot: 2 · (output elements) · (product of contracting dimension sizes); the batch dimensions
//   are part
//     of the output (XLA's kFmaFlops = 2).
//   - convolution: 2 · (output elements) · (kernel spatial elements) · (input features /
//   feature_group_count).
//     This counts every window tap, including taps over padding (XLA counts only in-bounds taps, so
//     this is an upper bound for padded convolutions; equal for VALID ones).
//   - reduce: (input elements − output elements) · (FLOP of one reducer application), per reduced
//   operand
//     set; reduce-window: output elements · (window elements − 1) · reducer FLOP; all-reduce /
//     reduce-scatter: input elements · reducer FLOP; select-and-scatter: source elements · window
//     elements · select FLOP + source elements · scatter FLOP.
//   - fusion: the fused computation's FLOP; bytes = fusion operands + fusion output only (the fused
//     intermediates stay on chip).
//   - call / while / conditional: the callee's cost (FLOP and bytes). A while whose trip count is
//     known at compile time (hlo/while_loop.h, XLA's pattern) counts its body trips times and its
//     condition trips + 1 times; otherwise body and condition count ONCE. A note says which. A
//     conditional counts its most expensive branch.
//   - bytes accessed = operand bytes + output bytes (ShapeUtil::ByteSizeOf, no padding for tiles);
//     parameter, constant, get-tuple-element, tuple, bitcast, after-all and the call-like ops
//     themselves count 0 bytes (XLA does the same for the first five; the callee's instructions
//     carry the bytes).
//   - custom-call: 0 FLOP (unknown) and operand + output bytes; listed in `unknown_flops`. A Pallas
//     TPU kernel (tpu_custom_call) with a cost_estimate counts the FLOP, transcendentals and bytes
//     it declares (hlo/kernel_cost_estimate.h), as XLA's TPU backend costs it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hlo/module.h"

namespace tpusim::hlo {

struct CostProperties {
  double flops = 0;            // FLOP
  double transcendentals = 0;  // transcendental operations (exp, log, tanh, ...)
  double bytes_accessed = 0;   // bytes
  CostProperties& operator+=(const CostProperties& o) {
    flops += o.flops;
    transcendentals += o.transcendentals;
    bytes_accessed += o.bytes_accessed;
    return *this;
  }
};

struct ModuleCost {
  /// Cost of one execution of the entry computation.
  CostProperties total;
  /// Each entry-computation instruction's cost (callees included), in instruction order.
  std::vector<std::pair<const HloInstruction*, CostProperties>> per_instruction;
  /// Instructions anywhere in the module whose FLOP are unknown (custom-call, rng, fft, ...).
  std::vector<const HloInstruction*> unknown_flops;
  /// Caveats, e.g. "while '%w': 8192 trips (known trip count)".
  std::vector<std::string> notes;
};

/// Costs the whole module (entry computation, recursing into called computations).
ModuleCost AnalyzeCost(const HloModule& module);

/// One instruction's own cost, not counting called computations (fusion/call/while get 0 FLOP
/// here). `reducer_flops` is the FLOP of one application of its to_apply/select computation (1 for
/// add).
CostProperties InstructionOwnCost(const HloInstruction& instruction, double reducer_flops = 1,
                                  double scatter_flops = 1);

}  // namespace tpusim::hlo
