#include "hlo/while_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "hlo/computation.h"
#include "hlo/linalg_options.h"
#include "hlo/module.h"

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

std::optional<int64_t> ScalarIntValue(const HloInstruction* i, int depth = 0);

// The argument every `call` of `param`'s computation passes for it, when there is at least one
// call and no other use of the computation (a computation only called is inlined by XLA's and
// tpusim's call inliners, so the argument is what the parameter becomes); nullptr otherwise.
const HloInstruction* CallArgument(const HloInstruction* param) {
  const HloComputation* callee = param->parent();
  const HloModule* module = callee == nullptr ? nullptr : callee->parent();
  if (module == nullptr || callee == module->entry_computation()) return nullptr;
  const HloInstruction* arg = nullptr;
  for (const auto& comp : module->computations()) {
    for (const auto& inst : comp->instructions()) {
      const std::vector<HloComputation*> called = inst->called_computations();
      const bool calls = inst->to_apply() == callee ||
                         std::find(called.begin(), called.end(), callee) != called.end();
      if (!calls) continue;
      if (inst->opcode() != HloOpcode::kCall ||
          param->parameter_number() >= inst->operand_count()) {
        return nullptr;  // used as a while body, a reduction, a fusion, ...
      }
      const HloInstruction* a = inst->operand(param->parameter_number());
      if (arg != nullptr && arg != a) {
        // Several calls: the same value from each, or not known.
        const std::optional<int64_t> x = ScalarIntValue(arg), y = ScalarIntValue(a);
        if (!x || !y || *x != *y) return nullptr;
      }
      arg = a;
    }
  }
  return arg;
}

// The value of a scalar integer expression known at compile time: a constant, an element of a
// tuple instruction, a parameter of a computation only called (the calls' argument), or convert /
// copy / reshape / negate / add / subtract / multiply / divide / remainder / maximum / minimum of
// such values (what XLA's constant folding would reduce to one constant after inlining;
// while-lowering runs before constant-folding). nullopt otherwise or on overflow.
std::optional<int64_t> ScalarIntValue(const HloInstruction* i, int depth) {
  if (depth > 64 || !i->shape().IsArray() || !i->shape().dimensions().empty() ||
      !IsInteger(i->shape().element_type())) {
    return std::nullopt;
  }
  auto operand = [&](int64_t n) { return ScalarIntValue(i->operand(n), depth + 1); };
  switch (i->opcode()) {
    case HloOpcode::kConstant:
      return IntConstant(i);
    case HloOpcode::kParameter: {
      const HloInstruction* arg = CallArgument(i);
      if (arg == nullptr) return std::nullopt;
      return ScalarIntValue(arg, depth + 1);
    }
    case HloOpcode::kGetTupleElement: {
      const HloInstruction* t = i->operand(0);
      if (t->opcode() != HloOpcode::kTuple || i->tuple_index() >= t->operand_count()) {
        return std::nullopt;
      }
      return ScalarIntValue(t->operand(i->tuple_index()), depth + 1);
    }
    case HloOpcode::kConvert:
    case HloOpcode::kCopy:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return operand(0);
    case HloOpcode::kNegate: {
      const std::optional<int64_t> a = operand(0);
      if (!a || *a == INT64_MIN) return std::nullopt;
      return -*a;
    }
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: {
      const std::optional<int64_t> a = operand(0), b = operand(1);
      if (!a || !b) return std::nullopt;
      int64_t r = 0;
      switch (i->opcode()) {
        case HloOpcode::kAdd:
          if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
          return r;
        case HloOpcode::kSubtract:
          if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
          return r;
        case HloOpcode::kMultiply:
          if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
          return r;
        case HloOpcode::kDivide:
          if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
          return *a / *b;
        case HloOpcode::kRemainder:
          if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
          return *a % *b;
        case HloOpcode::kMaximum:
          return std::max(*a, *b);
        default:
          return std::min(*a, *b);
      }
    }
    default:
      return std::nullopt;
  }
}

ComparisonDirection Mirrored(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt:
      return ComparisonDirection::kGt;
    case ComparisonDirection::kLe:
      return ComparisonDirection::kGe;
    case ComparisonDirection::kGt:
      return ComparisonDirection::kLt;
    case ComparisonDirection::kGe:
      return ComparisonDirection::kLe;
    default:
      return d;
  }
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

std::string TooManyTripsReason(int64_t limit) {
  if (limit != kMaxWhileTrips) {
    return fmt::format("more than {} trips (EvaluatorOptions::max_while_iterations)", limit);
  }
  return fmt::format("more than {} trips: tpusim runs at most {} trips of one while "
                     "(hlo::kMaxWhileTrips, one bound for the evaluator, the compiler and "
                     "--trip-count)",
                     limit, limit);
}

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
  // compare(i, limit), or compare(limit, i) read with the direction mirrored.
  const HloInstruction* lhs = cmp->operand(0);
  const HloInstruction* rhs = cmp->operand(1);
  ComparisonDirection direction = cmp->comparison_direction();
  if (!StateIndex(lhs) && StateIndex(rhs)) {
    std::swap(lhs, rhs);
    direction = Mirrored(direction);
  }
  const std::optional<int64_t> k = StateIndex(lhs);
  if (!k) return no("neither operand of the condition's compare is an element of the loop state");
  auto init_value = [&](int64_t e) -> std::optional<int64_t> {
    if (e < 0 || e >= init->operand_count()) return std::nullopt;
    return ScalarIntValue(init->operand(e));
  };
  const HloInstruction* root = body->root_instruction();
  if (root->opcode() != HloOpcode::kTuple || root->operand_count() != init->operand_count()) {
    return no("the body's root is not a tuple of the loop state");
  }
  // The limit: a constant, or a state element the body passes through unchanged.
  std::optional<int64_t> limit = ScalarIntValue(rhs);
  if (!limit) {
    const std::optional<int64_t> j = StateIndex(rhs);
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
      if (idx && *idx == *k) step = ScalarIntValue(next->operand(1 - a));
    }
  }
  if (!step) return no("the induction variable is not incremented by a constant");
  // XLA's integer semantics: the induction variable has the compare's element type; its add wraps
  // modulo 2^bits (two's complement for signed types) and unsigned types compare as unsigned. A
  // loop whose counter wraps while the condition still holds is not counted as if it stopped.
  const PrimitiveType type = cmp->operand(0)->shape().element_type();
  if (!IsInteger(type)) return no("the induction variable is not an integer");
  const int bits = BitWidth(type);
  const bool is_signed = IsSignedInteger(type);
  // The value of `v`'s low `bits` bits in the type, as int64 (u64 keeps its bit pattern).
  auto in_type = [&](uint64_t v) -> int64_t {
    if (bits >= 64) return static_cast<int64_t>(v);
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    v &= mask;
    if (is_signed && (v >> (bits - 1)) != 0) v |= ~mask;
    return static_cast<int64_t>(v);
  };
  auto holds = [&](int64_t a, int64_t b) {
    if (is_signed) return Holds(direction, a, b);
    // Unsigned: order the bit patterns as unsigned by flipping the sign bit.
    const auto flip = [](int64_t x) {
      return static_cast<int64_t>(static_cast<uint64_t>(x) ^ (uint64_t{1} << 63));
    };
    return Holds(direction, flip(a), flip(b));
  };
  const uint64_t step_bits = static_cast<uint64_t>(*step);
  const int64_t lim = in_type(static_cast<uint64_t>(*limit));
  int64_t trips = 0;
  for (int64_t i = in_type(static_cast<uint64_t>(*start)); holds(i, lim);) {
    if (++trips > kMaxWhileTrips) {
      return TripCount{std::nullopt, TooManyTripsReason(kMaxWhileTrips), /*over_limit=*/true};
    }
    const int64_t next_i = in_type(static_cast<uint64_t>(i) + step_bits);
    const bool wrapped = is_signed ? (*step > 0 ? next_i < i : *step < 0 && next_i > i)
                                   : static_cast<uint64_t>(next_i) < static_cast<uint64_t>(i);
    if (wrapped && holds(next_i, lim)) {
      return no(
          fmt::format("the {} induction variable wraps from {} to {} at trip {} (integer "
                      "add wraps in XLA) and the condition still holds",
                      PrimitiveTypeName(type), i, next_i, trips));
    }
    i = next_i;
  }
  return TripCount{trips, ""};
}

bool IsLoopByName(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kWhile ||
         (inst.opcode() == HloOpcode::kCustomCall && IsJacobiTarget(inst.custom_call_target()));
}

std::vector<std::string> DataDependentWhiles(const HloModule& module,
                                             const std::map<std::string, int64_t>& given) {
  std::vector<std::string> out;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      const bool loop = IsLoopByName(*inst) &&
                        (inst->opcode() != HloOpcode::kWhile || !KnownTripCount(*inst).trips);
      if (loop && given.count(inst->name()) == 0) {
        out.push_back(inst->name());
      }
    }
  }
  return out;
}

}  // namespace tpusim::hlo
