// FastForward: exact fast-forward of repeated loop trips.
//
// When a loop trip begins in a timing state equal, up to a shift of time, to the state an earlier
// trip of the same loop began in, every later period of the run repeats that one until a loop
// counter runs out: the controller skips as many whole periods as the loop counters allow,
// advancing the clock and every unit's cycles by k * P and every statistic by k times its
// increase over one period. The rest of the run (the remaining trips, fewer than a period's worth,
// and everything after the loop) is simulated as usual. The result is exactly that of the full
// simulation: the same cycles, statistics, per-instruction profile and stall attribution
// (tests/sim/fast_forward_test.cc compares them on loops with DMA, MXU, VPU and ICI work).
//
// The timing state (Unit::SaveState) is everything any unit's future behaviour depends on: every
// queue and in-flight message with its delivery cycle, every in-flight instruction, scoreboard
// entry and DMA transfer (with its fixed-point progress), the MXU array's timing, sync flags,
// pcs and open loops — every cycle relative to the snapshot's cycle, every sequence number
// relative to its counter. The loops' trip counters are compared apart: between the two
// snapshots every open loop of every core must be the same ctrl.loop execution (no loop was left
// or entered at that level), and the period may be repeated k times only while no counter would
// reach zero (k <= (remaining - 1) / per-period decrease for every loop that moved) and, on a
// core with ctrl.break_unless (timing-only: it leaves the loop once the trips done reach its
// `trips`), no replayed trip would reach the smallest such `trips`.
//
// Scope: timing-only runs (SimOptions::compute_values = false) with the fast MXU model and no
// trace. With values, every trip must still compute its data (the loop state changes each trip),
// so nothing is skipped; the PE-level MXU model keeps per-PE state that is not snapshotted; a
// trace must list every instruction. Loops are sampled at every trip boundary of the lowest core
// with an open loop (the leader) for the first kDenseTrips trips of a loop execution, then every
// kSparseStride-th trip; kHistory snapshots are kept per loop, so periods of up to kHistory
// samples are found.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/chip/system.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class FastForward {
 public:
  static constexpr uint64_t kDenseTrips = 64;
  static constexpr uint64_t kSparseStride = 8;
  static constexpr size_t kHistory = 32;

  /// `engine` runs `system`; a snapshot first steps every unit at its cycle (Engine::StepAllNow).
  FastForward(System& system, Engine* engine);
  ~FastForward();
  FastForward(const FastForward&) = delete;
  FastForward& operator=(const FastForward&) = delete;

  /// Called between engine cycles (after every unit stepped at `now`): returns the cycles the
  /// whole system was advanced by (0: nothing skipped).
  Cycles AfterStep(Cycles now);

  /// Loop trips of the leading loops skipped, and simulated cycles skipped, so far.
  uint64_t trips_skipped() const { return trips_skipped_; }
  Cycles cycles_skipped() const { return cycles_skipped_; }

 private:
  struct Snapshot {
    Cycles cycle{0};
    uint64_t hash = 0;
    std::vector<uint64_t> words;  // the timing state
    std::vector<uint64_t> stats;  // every statistic
    // Per core, per open loop level: trips left, the ctrl.loop execution's serial, trips done.
    struct Level {
      uint64_t remaining, serial, trips_done;
    };
    std::vector<std::vector<Level>> loops;
  };
  // The loop (of the leader) whose trips are being sampled.
  struct Sampled {
    int core = -1;
    size_t level = 0;
    uint64_t serial = 0;
    uint64_t boundaries = 0;
    std::deque<Snapshot> history;
  };

  bool Take(Cycles now, Snapshot& s);
  std::vector<uint64_t> Stats() const;
  void AdvanceStats(const std::vector<uint64_t>& delta, uint64_t times);
  // The number of periods that may be skipped from `now` (0: none), given the earlier snapshot.
  uint64_t Periods(const Snapshot& then, const Snapshot& now) const;
  void Skip(const Sampled& sampled, const Snapshot& then, const Snapshot& now, uint64_t periods);
  // The lowest core with an open loop, or -1. Visits the cores only when a loop was opened since
  // the last visit found none (`loop_opens_`), so a run without open loops costs nothing per cycle.
  int Leader();

  System& system_;
  Engine* engine_;
  std::vector<Unit*> units_;
  bool enabled_ = true;
  int leader_ = -1;
  uint64_t loop_opens_ = 0;        // loops opened by any core so far (Sequencer::set_loop_opens)
  uint64_t loop_opens_seen_ = 0;   // its value when Leader last found no open loop
  bool none_open_ = false;         // Leader's last visit found no open loop
  std::vector<Sampled> sampled_;  // per loop level of the leader
  uint64_t trips_skipped_ = 0;
  Cycles cycles_skipped_{0};
};

}  // namespace tpusim::sim
