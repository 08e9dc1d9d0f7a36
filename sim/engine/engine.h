// Engine: the one timeline all units of all chips run on, in integer cycles of the core clock.
//
// Each iteration steps the units due at the current cycle, stops if a unit reported an error, then
// jumps to the earliest cycle at which any unit has work, so idle stretches cost nothing. The run
// ends when no unit has work. A unit is due at the cycle its NextWork asked for, at the delivery
// cycle of a message sent to it (Port::Send wakes its receiver, unit.h) and, while it says
// StepAtNextEvent, at the next event cycle; a unit that is not event_driven() is due at every
// event cycle. So the cost of a cycle is that of the units with work in it, not of all units: a
// run of N cores costs O(N) per simulated cycle of work, not O(N^2). The schedule is a calendar, an
// ordered map from cycle to the units scheduled then (a bucket, sorted by unit index when its
// cycle comes); due units are stepped in the order they were added. (A min-heap on (cycle, unit)
// gives the same order, but with thousands of cores each pop walks a large array out of cache;
// replicas in lockstep share few distinct cycles, so the calendar stays small.) Stepping every
// unit at every event cycle (step_every_unit, the reference for tests) gives the same results.
//
// Because units interact only through ports of latency >= 1 (unit.h), the order in which units are
// stepped within a cycle cannot change a result; StepOrder lets a test prove it. Deterministic: no
// threads, no unordered containers, and the one clock read (the optional wall-clock deadline,
// --max-seconds) can only stop a run, never change its result.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <utility>
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

class Engine : public WakeTarget {
 public:
  /// `step_every_unit`: step every unit at every event cycle (the reference stepping, for tests).
  explicit Engine(StepOrder order = StepOrder::kForward, uint64_t seed = 1,
                  bool step_every_unit = false)
      : order_(order), rng_(seed | 1), step_every_unit_(step_every_unit) {}

  /// Adds a unit (not owned; it must outlive the engine's Run) and makes itself the unit's waker.
  void AddUnit(Unit* unit);
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
  void set_after_step(std::function<Cycles(Cycles)> hook) { after_step_ = std::move(hook); }

  /// From the after-step hook only: steps every unit not yet stepped at the current cycle and syncs
  /// every unit (Unit::Sync), so that every unit's state is what stepping every unit at every event
  /// cycle gives (fast-forward snapshots compare whole-system states).
  void StepAllNow();

  /// Runs from cycle 0 until no unit has work. Returns the cycle of the last event (the run's
  /// length in cycles). ResourceExhausted naming `max_cycles` if some unit still has work past it,
  /// or naming the wall-clock limit if the deadline (set_deadline) passed first.
  StatusOr<Cycles> Run(Cycles max_cycles);

  /// Number of event cycles stepped by the last Run (for benchmarks).
  uint64_t events() const { return events_; }
  /// Unit steps of the last Run (for benchmarks: the engine's work).
  uint64_t unit_steps() const { return unit_steps_; }

  void Wake(size_t unit, Cycles at) override;

 private:
  // The units due at `now`, in index order, taken off the schedule.
  void CollectDue(Cycles now);
  void StepDue(Cycles now);
  // Puts unit `u` back on the schedule after it was stepped at `now`.
  void Reschedule(size_t u, Cycles now);
  // Reschedules every unit (after StepAllNow or a fast-forward shift).
  void RescheduleAll(Cycles now);
  // The earliest scheduled cycle (stale entries dropped), or kNever.
  Cycles NextCycle();

  StepOrder order_;
  uint64_t rng_;
  bool step_every_unit_;
  std::vector<Unit*> units_;
  std::vector<Cycles> next_;     // per unit: the cycle it is scheduled at (kNever: none)
  std::vector<Cycles> stepped_;  // per unit: the last cycle it was stepped at (kNever: none)
  std::vector<bool> watching_;   // per unit: in watchers_
  std::vector<size_t> always_;   // units stepped at every event cycle
  std::vector<size_t> watchers_;  // units that asked to be stepped at the next event cycle
  // Schedule entries by cycle: unit u is due at c when c's bucket holds u and next_[u] == c (other
  // entries are stale: the unit was rescheduled since, or is listed twice).
  std::map<uint64_t, std::vector<size_t>> calendar_;
  std::vector<std::vector<size_t>> spare_;  // emptied buckets, their capacity kept for reuse
  void Schedule(size_t u, Cycles at);
  void DropBucket(std::map<uint64_t, std::vector<size_t>>::iterator it);
  std::vector<size_t> due_;
  Cycles now_{0};
  bool in_run_ = false;
  bool rescheduled_all_ = false;
  uint64_t unit_steps_ = 0;
  const ErrorSink* errors_ = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::function<void(Cycles)> observer_;
  std::function<Cycles(Cycles)> after_step_;
  double deadline_seconds_ = 0;
  uint64_t events_ = 0;
};

}  // namespace tpusim::sim
