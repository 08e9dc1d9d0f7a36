// Unit: one piece of hardware on the simulation timeline (a sequencer, an MXU, the VPU, a DMA
// engine, the transfer network of HBM and ICI links). Units never call each other and never read
// each other's state: they exchange messages only through Ports (port.h) whose latency is at least
// one cycle, so whatever a unit sends at cycle t is seen by its receiver at t+1 at the earliest.
// The order in which the Engine steps units inside one cycle therefore cannot change any result
// (tests/sim/engine_test.cc steps them in reverse and shuffled order and compares every stat).
//
// Event-driven units (event_driven() true) name themselves as the receiver of every port they
// receive on (Port::set_receiver), so a Send wakes them for its delivery cycle; the Engine then
// steps such a unit only at the cycles it asked for (NextWork), at deliveries and, while
// StepAtNextEvent() holds, at the next event cycle of the run. Stepping a unit at a cycle where it
// has nothing to do must change nothing but time-additive bookkeeping (a stall or busy counter
// split into two intervals), so that this gives exactly what stepping every unit at every event
// cycle gives (tests/sim/engine_test.cc, tests/sim/equivalence_test.cc compare the two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "common/units.h"

namespace tpusim::sim {
class StateWriter;

/// What a Unit's Wake calls: the Engine's schedule.
class WakeTarget {
 public:
  virtual ~WakeTarget() = default;
  /// Unit `unit` (its index in the target) has work at cycle `at`.
  virtual void Wake(size_t unit, Cycles at) = 0;
};
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
  /// by the Engine at the unit's own event cycles (all event cycles of the run if it is not
  /// event_driven()) and at some others, so a unit must tolerate being stepped at a cycle where it
  /// has nothing to do. `now` never decreases.
  virtual void Step(Cycles now) = 0;

  /// The earliest cycle strictly after `now` at which this unit has work (its own timers or a
  /// message arriving on one of its input ports), or kNever. Called after the units due at `now`
  /// have been stepped; an event-driven unit's answer must stay right until it is stepped again or
  /// a message is sent to it.
  virtual Cycles NextWork(Cycles now) const = 0;

  /// True if every port the unit receives on names it as receiver (Port::set_receiver): the Engine
  /// may then step it only at its own event cycles. False (the default): stepped at every event
  /// cycle of the run.
  virtual bool event_driven() const { return false; }

  /// True if the unit's state changes at the next event cycle of the run, whichever unit has work
  /// then (queried after NextWork): the Engine steps it at that cycle too.
  virtual bool StepAtNextEvent() const { return false; }

  /// A message on the unit's input port `port` (the number it gave Port::set_receiver) is
  /// delivered at `at`. The default wakes the unit; a unit with many ports overrides it to find
  /// the ports with work without scanning them all (and wakes itself).
  virtual void Delivered(uint32_t /*port*/, Cycles at) { Wake(at); }

  /// Brings state the unit keeps lazily (progress of transfers, busy counters) up to `now`, as if
  /// it had been stepped at every event cycle up to `now` (Engine::StepAllNow calls it before
  /// fast-forward snapshots, which compare whole-system states). The default: nothing is lazy.
  virtual void Sync(Cycles /*now*/) {}

  /// The unit has work at `at` (for the engine's schedule).
  void Wake(Cycles at) {
    if (waker_ != nullptr) waker_->Wake(waker_index_, at);
  }
  /// Where Wake goes (the Engine, when the unit is added to it).
  void set_waker(WakeTarget* target, size_t index) {
    waker_ = target;
    waker_index_ = index;
  }

  /// Fast-forward of repeated loop trips (sim/fast_forward.h): writes the unit's timing state —
  /// everything its future behaviour depends on, every absolute cycle relative to the writer's
  /// base — and returns true; false (the default) if the unit cannot be fast-forwarded, which
  /// turns fast-forward off for the run. Statistics are not state (StatRegistry holds them).
  virtual bool SaveState(StateWriter& /*w*/) const { return false; }
  /// Advances every absolute cycle of the unit's state by `delta` (after SaveState returned true).
  virtual void ShiftState(Cycles /*delta*/) {}

 private:
  WakeTarget* waker_ = nullptr;
  size_t waker_index_ = 0;
};

}  // namespace tpusim::sim
