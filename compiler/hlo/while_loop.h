// The trip count of a `while` when it is known at compile time, by XLA's known-trip-count pattern
// (xla/service/while_loop_analysis.cc in spirit): the condition's root is compare(i, limit) with
// i = get-tuple-element(state, k), direction LT, LE, GT, GE, NE or EQ; `limit` is a constant, or
// element j of the state that the body passes through unchanged; the body's root is a tuple whose
// element k is add(get-tuple-element(state, k), constant step) (either operand order); the while's
// operand is a tuple whose elements k (and j) are integer constants. The count is found by stepping
// i from its initial value until the condition fails, at most kMaxKnownTrips times. Used by
// while-lowering (compiler/passes/while_lowering.h) and the cost analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/hlo/instruction.h"

namespace tpusim::hlo {

inline constexpr int64_t kMaxKnownTrips = int64_t{1} << 24;

struct TripCount {
  std::optional<int64_t> trips;  // set when known
  std::string reason;            // why not, otherwise ("the limit is neither a constant nor ...")
};

TripCount KnownTripCount(const HloInstruction& w);

}  // namespace tpusim::hlo
