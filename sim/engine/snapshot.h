// Snapshots of a simulation's timing state, for the exact fast-forward of repeated loop trips
// (sim/fast_forward.h).
//
// A StateWriter turns a unit's timing state into a word sequence in which every absolute cycle is
// written relative to a base cycle (the cycle the snapshot is taken at), so two snapshots taken at
// different cycles compare equal exactly when the two states are equal up to a shift of time.
// Statistics (monotone counters) are not part of the state: they are saved separately and, when
// trips are skipped, advanced by their per-period increase times the number of periods.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/units.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class StateWriter {
 public:
  explicit StateWriter(uint64_t base) : base_(base) {}

  /// A value that is not a cycle (a count, a pc, a flag, an enum).
  void Value(uint64_t v) { words_.push_back(v); }
  /// An absolute cycle (kNever allowed): written as its distance from the base, exactly (also
  /// for cycles before the base).
  void Time(uint64_t t) {
    words_.push_back(t == kNever.value() ? 1 : 0);
    words_.push_back(t == kNever.value() ? 0 : t - base_);
  }
  void Time(Cycles t) { Time(t.value()); }
  /// A cycle only ever used as a lower bound (max(now, t)): cycles up to the base are equivalent
  /// and written as the base.
  void LowerBound(uint64_t t) { Time(t < base_ ? base_ : t); }
  void LowerBound(Cycles t) { LowerBound(t.value()); }

  /// Identifiers that only count up (instruction sequence numbers of a core, collective instance
  /// ids): written relative to the next one to be handed out, so their order is kept and their
  /// absolute values (which differ from trip to trip) are not state.
  void set_seq_bases(std::vector<uint64_t> next_seq) { seq_base_ = std::move(next_seq); }
  void set_instance_base(uint64_t next_instance) { instance_base_ = next_instance; }
  void Seq(int core, uint64_t seq) {
    words_.push_back(seq - seq_base_.at(static_cast<size_t>(core)));
  }
  void Instance(uint64_t instance) { words_.push_back(instance - instance_base_); }

  uint64_t base() const { return base_; }
  const std::vector<uint64_t>& words() const { return words_; }
  std::vector<uint64_t> Take() { return std::move(words_); }

 private:
  uint64_t base_;
  std::vector<uint64_t> seq_base_;
  uint64_t instance_base_ = 0;
  std::vector<uint64_t> words_;
};

/// `t` advanced by `delta` (kNever stays kNever).
inline Cycles ShiftTime(Cycles t, Cycles delta) { return t == kNever ? t : t + delta; }

}  // namespace tpusim::sim
