// Engine: the one timeline all units of all chips run on, in integer cycles of the core clock.
//
// Each iteration steps every unit at the current cycle, stops if a unit reported an error, then
// jumps to the earliest cycle at which any unit has work (Unit::NextWork), so idle stretches cost
// nothing. The run ends when no unit has work. Because units interact only through ports of latency
// >= 1 (unit.h), the order in which units are stepped within a cycle cannot change a result;
// StepOrder lets a test prove it. Deterministic: no clocks, no threads, no unordered containers.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

enum class StepOrder {
  kForward,   // units in the order they were added (the default)
  kReverse,   // last added first
  kShuffled,  // a fixed pseudo-random permutation per cycle (seeded), for the order-independence
              // test
};

class Engine {
 public:
  explicit Engine(StepOrder order = StepOrder::kForward, uint64_t seed = 1)
      : order_(order), rng_(seed | 1) {}

  /// Adds a unit (not owned; it must outlive the engine's Run).
  void AddUnit(Unit* unit) { units_.push_back(unit); }
  /// Stops the run (returning the sink's Status) at the end of a cycle in which an error was
  /// reported.
  void set_error_sink(const ErrorSink* sink) { errors_ = sink; }

  /// Runs from cycle 0 until no unit has work. Returns the cycle of the last event (the run's
  /// length in cycles). ResourceExhausted naming `max_cycles` if some unit still has work past it.
  StatusOr<Cycles> Run(Cycles max_cycles);

  /// Number of event cycles stepped by the last Run (for benchmarks).
  uint64_t events() const { return events_; }

 private:
  void StepAll(Cycles now);

  StepOrder order_;
  uint64_t rng_;
  std::vector<Unit*> units_;
  const ErrorSink* errors_ = nullptr;
  std::vector<size_t> perm_;
  uint64_t events_ = 0;
};

}  // namespace tpusim::sim
