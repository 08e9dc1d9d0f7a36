// while-unroller: a `while` in the entry computation whose trip count is known at compile time is
// replaced by that many copies of its body, as XLA's WhileLoopUnroller does. tpusim's ISA loops
// (ctrl.loop) repeat an unchanged body and cannot advance addresses, so unrolling is how a loop
// over layers or time steps (jax.lax.scan / fori_loop, a PyTorch/XLA loop traced into a while)
// reaches the lowering; DESIGN.md §5 "while / conditional / call".
//
// Contract.
//  * Trip count (XLA's known-trip-count pattern): the condition's root is compare(i, limit) with
//    i = get-tuple-element(state, k), direction LT, LE, GT, GE or NE; `limit` is a constant, or
//    element j of the state that the body passes through unchanged; the body's root is a tuple
//    whose element k is add(get-tuple-element(state, k), constant step) (either operand order);
//    the while's operand is a tuple whose elements k (and j) are integer constants. The count is
//    found by stepping i from its initial value until the condition fails.
//  * A loop is unrolled when trips x body instructions <= `max_instructions` (default 100000);
//    copies are named "<name>.it<n>" and keep the body's metadata and source locations. Whiles
//    that a copied body contains, directly or in a computation it calls (inlined by call-inliner
//    here), are unrolled in turn, until the entry computation has no while and no call.
//  * Errors (Unimplemented, naming the while and its file:line:col): a trip count the pattern
//    cannot find (with the reason), or an unrolled size over the budget.
//  * Values are unchanged; the condition is evaluated at compile time only.
#pragma once

#include <cstdint>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class WhileUnroller : public HloPass {
 public:
  explicit WhileUnroller(int64_t max_instructions = 100000) : max_instructions_(max_instructions) {}
  std::string_view name() const override { return "while-unroller"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  int64_t max_instructions_;
};

}  // namespace tpusim::compiler
