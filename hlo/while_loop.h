// The trip count of a `while` when it is known at compile time, by XLA's known-trip-count pattern
// (xla/service/while_loop_analysis.cc in spirit): the condition's root is compare(i, limit) with
// i = get-tuple-element(state, k) (either operand order), direction LT, LE, GT, GE, NE or EQ;
// `limit` is a value known at compile time, or element j of the state that the body passes through
// unchanged; the body's root is a tuple whose element k is add(get-tuple-element(state, k), step)
// (either operand order); the while's operand is a tuple whose elements k (and j) are known. A
// value is known when it is a scalar integer expression of constants — convert, negate, add,
// subtract, multiply, divide, remainder, maximum, minimum, tuple elements — as XLA's constant
// folding would leave it (while-lowering runs before tpusim's constant-folding). The count is found
// by stepping i from its initial value until the condition fails, at most kMaxWhileTrips times.
// Used by while-lowering (compiler/passes/while_lowering.h), the cost analysis and `tpusim run`
// (DataDependentWhiles: the loops whose count the evaluator counts or --trip-count gives).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/module.h"

namespace tpusim::hlo {

/// The most trips of one while tpusim runs, one rule for every engine: the evaluator refuses a loop
/// past it (EvaluatorOptions::max_while_iterations; at once when KnownTripCount finds the count),
/// the compiler refuses a known count past it (while-lowering) and so does `--trip-count`. 2^24:
/// far beyond any loop in the corpus (the largest counted loops run thousands of trips), and
/// about a minute of the evaluator on a scalar loop body (3.4 us per trip measured).
inline constexpr int64_t kMaxWhileTrips = int64_t{1} << 24;

/// "more than `limit` trips, ...": why a while past `limit` trips is refused, the same words from
/// the evaluator and the compiler; when `limit` is kMaxWhileTrips the message names the rule.
std::string TooManyTripsReason(int64_t limit);

struct TripCount {
  std::optional<int64_t> trips;  // set when known
  std::string reason;            // why not, otherwise ("the limit is neither a constant nor ...")
  /// The count is known to be more than kMaxWhileTrips (`reason` says so): the loop is refused,
  /// not counted on the evaluator or given by --trip-count.
  bool over_limit = false;
};

TripCount KnownTripCount(const HloInstruction& w);

/// Whether `inst` is a while, or a custom-call the compiler expands into a data-dependent while
/// that takes the call's name (Eigh, syevd: IsJacobiTarget) — a loop a trip count can be given for
/// (--trip-count) or counted (DataDependentWhiles) by that name.
bool IsLoopByName(const HloInstruction& inst);

/// The names of the module's whiles whose trip count depends on data: not found by KnownTripCount
/// and not a key of `given` (trip counts the user gave, `--trip-count NAME=N`), in computation and
/// instruction order — and of the custom-calls the compiler expands into such a while named after
/// the call (Eigh and syevd: the Jacobi sweeps, compiler/passes/eigh_expander.h).
std::vector<std::string> DataDependentWhiles(const HloModule& module,
                                             const std::map<std::string, int64_t>& given);

}  // namespace tpusim::hlo
