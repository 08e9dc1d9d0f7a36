// Engine: the one timeline all units of all chips run on, in integer cycles of the core clock.
//
// Each iteration steps every unit at the current cycle, stops if a unit reported an error, then
// jumps to the earliest cycle at which any unit has work (Unit::NextWork), so idle stretches cost
// nothing. The run ends when no unit has work. Because units interact only through ports of latency
// >= 1 (unit.h), the order in which units are stepped within a cycle cannot change a result;
// StepOrder lets a test prove it. Deterministic: no threads, no unordered containers, and the one
// clock read (the optional wall-clock deadline, --max-seconds) can only stop a run, never change
// its result.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
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
  /// Stops the run with ResourceExhausted once the wall clock passes `deadline`, checked every
  /// kDeadlineCheckInterval event cycles. The interval is small because one event cycle can be
  /// long (the PE-level MXU model advances every PE of a matmul inside one). `limit_seconds` is
  /// only used in the message.
  void set_deadline(std::chrono::steady_clock::time_point deadline, double limit_seconds) {
    deadline_ = deadline;
    deadline_seconds_ = limit_seconds;
  }
  static constexpr uint64_t kDeadlineCheckInterval = 16;
  /// Calls `observer(now)` every kObserverInterval event cycles (progress reports). The observer
  /// only reads; it cannot change the run.
  void set_observer(std::function<void(Cycles)> observer) { observer_ = std::move(observer); }
  static constexpr uint64_t kObserverInterval = 64;

  /// Calls `hook(now)` after every unit has been stepped at event cycle `now` (and no error was
  /// reported). The hook may change no result except through an exact time shift: it returns the
  /// number of cycles every unit's state was advanced by (fast_forward.h), 0 normally, and the
  /// engine's clock advances by as much.
  void set_after_step(std::function<uint64_t(Cycles)> hook) { after_step_ = std::move(hook); }

  /// Runs from cycle 0 until no unit has work. Returns the cycle of the last event (the run's
  /// length in cycles). ResourceExhausted naming `max_cycles` if some unit still has work past it,
  /// or naming the wall-clock limit if the deadline (set_deadline) passed first.
  StatusOr<Cycles> Run(Cycles max_cycles);

  /// Number of event cycles stepped by the last Run (for benchmarks).
  uint64_t events() const { return events_; }

 private:
  void StepAll(Cycles now);

  StepOrder order_;
  uint64_t rng_;
  std::vector<Unit*> units_;
  const ErrorSink* errors_ = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::function<void(Cycles)> observer_;
  std::function<uint64_t(Cycles)> after_step_;
  double deadline_seconds_ = 0;
  std::vector<size_t> perm_;
  uint64_t events_ = 0;
};

}  // namespace tpusim::sim
