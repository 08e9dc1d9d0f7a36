// The trip count of a `while` when it is known at compile time, by XLA's known-trip-count pattern
// (xla/service/while_loop_analysis.cc in spirit): the condition's root is compare(i, limit) with
// i = get-tuple-element(state, k) (either operand order), direction LT, LE, GT, GE, NE or EQ;
// `limit` is a value known at compile time, or element j of the state that the body passes through
// unchanged; the body's root is a tuple whose element k is add(get-tuple-element(state, k), step)
// (either operand order); the while's operand is a tuple whose elements k (and j) are known. A
// value is known when it is a scalar integer expression of constants — convert, negate, add,
// subtract, multiply, divide, remainder, maximum, minimum, tuple elements — as XLA's constant
// folding would leave it (while-lowering runs before tpusim's constant-folding). The count is found
// by stepping i from its initial value until the condition fails, at most kMaxKnownTrips times.
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

inline constexpr int64_t kMaxKnownTrips = int64_t{1} << 24;

struct TripCount {
  std::optional<int64_t> trips;  // set when known
  std::string reason;            // why not, otherwise ("the limit is neither a constant nor ...")
};

TripCount KnownTripCount(const HloInstruction& w);

/// The names of the module's whiles whose trip count depends on data: not found by KnownTripCount
/// and not a key of `given` (trip counts the user gave, `--trip-count NAME=N`), in computation and
/// instruction order.
std::vector<std::string> DataDependentWhiles(const HloModule& module,
                                             const std::map<std::string, int64_t>& given);

}  // namespace tpusim::hlo
