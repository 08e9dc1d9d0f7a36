#include "compiler/hlo/while_loop.h"

#include <fmt/format.h>

#include "compiler/hlo/computation.h"

namespace tpusim::hlo {
namespace {

// The scalar integer value of a constant instruction.
std::optional<int64_t> IntConstant(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kConstant || !i->shape().IsArray() ||
      !i->shape().dimensions().empty() || i->literal().int_values.size() != 1) {
    return std::nullopt;
  }
  return i->literal().int_values[0];
}

// k if `i` is get-tuple-element(parameter 0 of its computation, k).
std::optional<int64_t> StateIndex(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kGetTupleElement) return std::nullopt;
  const HloInstruction* p = i->operand(0);
  if (p->opcode() != HloOpcode::kParameter || p->parameter_number() != 0) return std::nullopt;
  return i->tuple_index();
}

bool Holds(ComparisonDirection d, int64_t a, int64_t b) {
  switch (d) {
    case ComparisonDirection::kLt:
      return a < b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kEq:
      return a == b;
  }
  return false;
}

}  // namespace

TripCount KnownTripCount(const HloInstruction& w) {
  auto no = [](std::string why) { return TripCount{std::nullopt, std::move(why)}; };
  const HloComputation* cond = w.while_condition();
  const HloComputation* body = w.while_body();
  const HloInstruction* init = w.operand(0);
  if (cond == nullptr || body == nullptr) return no("no condition or body");
  if (init->opcode() != HloOpcode::kTuple) return no("the loop state is not a tuple");
  const HloInstruction* cmp = cond->root_instruction();
  if (cmp->opcode() != HloOpcode::kCompare) {
    return no("the condition's root is not a compare");
  }
  const std::optional<int64_t> k = StateIndex(cmp->operand(0));
  if (!k) return no("the compare's left operand is not an element of the loop state");
  auto init_value = [&](int64_t e) -> std::optional<int64_t> {
    if (e < 0 || e >= init->operand_count()) return std::nullopt;
    return IntConstant(init->operand(e));
  };
  const HloInstruction* root = body->root_instruction();
  if (root->opcode() != HloOpcode::kTuple || root->operand_count() != init->operand_count()) {
    return no("the body's root is not a tuple of the loop state");
  }
  // The limit: a constant, or a state element the body passes through unchanged.
  std::optional<int64_t> limit = IntConstant(cmp->operand(1));
  if (!limit) {
    const std::optional<int64_t> j = StateIndex(cmp->operand(1));
    if (j && *j < root->operand_count()) {
      const std::optional<int64_t> same = StateIndex(root->operand(*j));
      if (same && *same == *j) limit = init_value(*j);
    }
  }
  if (!limit) return no("the limit is neither a constant nor a constant loop invariant");
  const std::optional<int64_t> start = init_value(*k);
  if (!start) return no("the induction variable's initial value is not a constant");
  const HloInstruction* next = root->operand(*k);
  std::optional<int64_t> step;
  if (next->opcode() == HloOpcode::kAdd) {
    for (int a = 0; a < 2 && !step; ++a) {
      const std::optional<int64_t> idx = StateIndex(next->operand(a));
      if (idx && *idx == *k) step = IntConstant(next->operand(1 - a));
    }
  }
  if (!step) return no("the induction variable is not incremented by a constant");
  int64_t trips = 0;
  for (int64_t i = *start; Holds(cmp->comparison_direction(), i, *limit); i += *step) {
    if (++trips > kMaxKnownTrips) return no(fmt::format("more than {} trips", kMaxKnownTrips));
  }
  return TripCount{trips, ""};
}

}  // namespace tpusim::hlo
