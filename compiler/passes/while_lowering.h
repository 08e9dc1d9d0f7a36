// while-lowering: every `while` in the entry computation must have a trip count known at compile
// time (XLA's pattern, below). A short loop is replaced by that many copies of its body, as XLA's
// WhileLoopUnroller does; a loop whose copies would go over the unrolling budget becomes a loop
// region (compiler/passes/loop_region.h): its body inlined once between a loop_begin and a
// loop_end marker, lowered to `ctrl.loop TRIPS ... ctrl.endloop` over state buffers at fixed HBM
// addresses. Either way a loop over layers or time steps (jax.lax.scan / fori_loop, a PyTorch/XLA
// loop traced into a while) reaches the lowering; DESIGN.md §5 "while / conditional / call".
//
// Contract.
//  * Trip count (XLA's known-trip-count pattern): the condition's root is compare(i, limit) with
//    i = get-tuple-element(state, k), direction LT, LE, GT, GE or NE; `limit` is a constant, or
//    element j of the state that the body passes through unchanged; the body's root is a tuple
//    whose element k is add(get-tuple-element(state, k), constant step) (either operand order);
//    the while's operand is a tuple whose elements k (and j) are integer constants. The count is
//    found by stepping i from its initial value until the condition fails (at most 2^24 trips).
//  * Loops are taken outermost first. A loop is unrolled while the instructions unrolling has added
//    stay within `max_unrolled_instructions` (default 100000); copies are named "<name>.it<n>" and
//    keep the body's metadata and source locations. Otherwise the loop becomes a region whose
//    instructions keep the body's names (made unique). Whiles that a copied body contains, directly
//    or in a computation it calls (inlined by call-inliner here), are handled in turn, until the
//    entry computation has no while and no call. Regions nest at most kMaxLoopRegionDepth deep.
//  * A loop whose count the pattern cannot find (a data-dependent loop) takes the count the user
//    gave for its name (CompileOptions::trip_counts, `--trip-count NAME=N`) or else its branch
//    count (CompileOptions::branch_trip_counts: the evaluator's count on the run's inputs). Either
//    way it runs as real control flow: a region with its condition inlined at the top of every
//    trip and a break marker on the condition's pred (loop_region.h), lowered to
//    `ctrl.break_unless`; the values are then the module's whatever the count, which only tells a
//    timing-only simulation how many trips to assume (N trips: N + 1 conditions and N bodies, as
//    the real loop runs, so a given count and a counted one time alike). Such a loop is never
//    unrolled — except a branch count of 0 (no trip on the run's inputs, or never reached there:
//    inside a conditional branch they do not take), which makes the while its initial state.
//  * Errors (Unimplemented, naming the while and its file:line:col): a trip count neither the
//    pattern finds nor the user gave (with the reason and the --trip-count remedy), or regions
//    nested too deep.
//  * Values are unchanged; the condition is evaluated at compile time only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

/// Nesting limit of loop regions: isa::kMaxLoopDepth (8) less one level kept for the loops a kernel
/// emits inside a region (--custom-call-cost's spin).
inline constexpr int kMaxLoopRegionDepth = 7;

class WhileLowering : public HloPass {
 public:
  /// `given_trip_counts`: trip counts for whiles whose count is not known at compile time, by
  /// while name (--trip-count NAME=N); copies of a loop body keep their loop's original name as a
  /// prefix ("w.it3", "w.1"), which is matched too. They run as branch loops with that count.
  /// `branch_trip_counts`: data-dependent whiles (by name, matched like the given counts) to run
  /// as branch loops, with the trips a timing-only simulation assumes (a given count wins).
  explicit WhileLowering(int64_t max_unrolled_instructions = 100000,
                         std::map<std::string, int64_t> given_trip_counts = {},
                         std::map<std::string, int64_t> branch_trip_counts = {})
      : max_unrolled_(max_unrolled_instructions),
        given_(std::move(given_trip_counts)),
        branch_(std::move(branch_trip_counts)) {}
  std::string_view name() const override { return "while-lowering"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  int64_t max_unrolled_;
  std::map<std::string, int64_t> given_;
  std::map<std::string, int64_t> branch_;
};

}  // namespace tpusim::compiler
