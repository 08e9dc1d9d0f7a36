// Unit: one piece of hardware on the simulation timeline (a sequencer, an MXU, the VPU, a DMA
// engine, the transfer network of HBM and ICI links). Units never call each other and never read
// each other's state: they exchange messages only through Ports (port.h) whose latency is at least
// one cycle, so whatever a unit sends at cycle t is seen by its receiver at t+1 at the earliest.
// The order in which the Engine steps units inside one cycle therefore cannot change any result
// (tests/sim/engine_test.cc steps them in reverse and shuffled order and compares every stat).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "common/units.h"

namespace tpusim::sim {
class StateWriter;
}

namespace tpusim::sim {

/// "No work scheduled": the answer of Unit::NextWork() for a unit that is idle until a message
/// arrives.
inline constexpr Cycles kNever{std::numeric_limits<uint64_t>::max()};

/// The earlier of two cycles (for NextWork computations).
inline Cycles EarliestOf(Cycles a, Cycles b) { return a < b ? a : b; }

class Unit {
 public:
  virtual ~Unit() = default;

  /// The unit's stat path, e.g. "chip0.core1.mxu2".
  virtual const std::string& path() const = 0;

  /// Does this cycle's work: consumes the messages of its input ports delivered at or before `now`,
  /// advances its own state, and sends messages (delivered at now + latency, latency >= 1). Called
  /// by the Engine at every cycle at which any unit has work, so a unit must tolerate being stepped
  /// at a cycle where it has nothing to do. `now` never decreases.
  virtual void Step(Cycles now) = 0;

  /// The earliest cycle strictly after `now` at which this unit has work (its own timers or a
  /// message arriving on one of its input ports), or kNever. Called after every unit has been
  /// stepped at `now`.
  virtual Cycles NextWork(Cycles now) const = 0;

  /// Fast-forward of repeated loop trips (sim/fast_forward.h): writes the unit's timing state —
  /// everything its future behaviour depends on, every absolute cycle relative to the writer's
  /// base — and returns true; false (the default) if the unit cannot be fast-forwarded, which
  /// turns fast-forward off for the run. Statistics are not state (StatRegistry holds them).
  virtual bool SaveState(StateWriter& /*w*/) const { return false; }
  /// Advances every absolute cycle of the unit's state by `delta` (after SaveState returned true).
  virtual void ShiftState(uint64_t /*delta*/) {}
};

}  // namespace tpusim::sim
