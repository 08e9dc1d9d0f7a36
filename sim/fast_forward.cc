#include "sim/fast_forward.h"

#include <algorithm>

#include "common/check.h"

namespace tpusim::sim {
namespace {

uint64_t Hash(const std::vector<uint64_t>& words) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over 64-bit words, mixed
  for (uint64_t w : words) {
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

FastForward::FastForward(System& system, Engine* engine)
    : system_(system), engine_(engine), units_(system.units()) {
  for (auto& core : system_.cores()) core->sequencer().set_loop_opens(&loop_opens_);
}

FastForward::~FastForward() {
  for (auto& core : system_.cores()) core->sequencer().set_loop_opens(nullptr);
}

int FastForward::Leader() {
  // Loops only open through ctrl.loop, which counts in loop_opens_: if none opened since a visit
  // found none open, none is open now.
  if (none_open_ && loop_opens_ == loop_opens_seen_) return -1;
  auto& cores = system_.cores();
  for (size_t c = 0; c < cores.size(); ++c) {
    if (!cores[c]->sequencer().loops().empty()) {
      none_open_ = false;
      return static_cast<int>(c);
    }
  }
  none_open_ = true;
  loop_opens_seen_ = loop_opens_;
  return -1;
}

std::vector<uint64_t> FastForward::Stats() const {
  std::vector<uint64_t> v = system_.stats()->Values();
  for (auto& core : system_.cores()) {
    core->sequencer().SaveStats(v);
    core->attribution().SaveStats(v);
    for (auto& m : core->mxus()) {
      const std::array<uint64_t, MxuCounters::kNumStats> c = m->mutable_counters()->Stats();
      v.insert(v.end(), c.begin(), c.end());
    }
  }
  return v;
}

void FastForward::AdvanceStats(const std::vector<uint64_t>& delta, uint64_t times) {
  const size_t registry = system_.stats()->Values().size();
  system_.stats()->AddTimes(std::vector<uint64_t>(delta.begin(), delta.begin() + registry), times);
  const uint64_t* d = delta.data() + registry;
  for (auto& core : system_.cores()) {
    std::vector<uint64_t> probe;
    core->sequencer().SaveStats(probe);
    core->sequencer().AdvanceStats(d, times);
    d += probe.size();
    core->attribution().AdvanceStats(d, times);
    d += kNumStallCategories;
    for (auto& m : core->mxus()) {
      m->mutable_counters()->AdvanceStats(d, times);
      d += MxuCounters::kNumStats;
    }
  }
  TPUSIM_CHECK(d == delta.data() + delta.size());
}

bool FastForward::Take(Cycles now, Snapshot& s) {
  // The engine steps only the units with work; a snapshot compares every unit's state as of `now`
  // (time-additive bookkeeping such as a stall counter brought up to `now`).
  engine_->StepAllNow();
  auto& cores = system_.cores();
  for (auto& core : cores) {
    core->FlushAttribution();
    for (auto& m : core->mxus()) {
      if (m->mutable_counters() == nullptr) return false;
    }
  }
  StateWriter w(now.value());
  std::vector<uint64_t> seq_bases;
  for (auto& core : cores) seq_bases.push_back(core->sequencer().next_seq());
  w.set_seq_bases(std::move(seq_bases));
  w.set_instance_base(system_.hub().next_instance());
  for (const Unit* u : units_) {
    if (!u->SaveState(w)) return false;
  }
  s.loops.clear();
  for (auto& core : cores) {
    core->attribution().Save(w);
    std::vector<Snapshot::Level> levels;
    for (const Sequencer::Loop& l : core->sequencer().loops()) {
      levels.push_back({l.remaining, l.serial, l.trips_done});
    }
    s.loops.push_back(std::move(levels));
  }
  s.cycle = now;
  s.words = w.Take();
  s.hash = Hash(s.words);
  s.stats = Stats();
  return true;
}

uint64_t FastForward::Periods(const Snapshot& then, const Snapshot& now) const {
  if (then.hash != now.hash || then.words != now.words) return 0;
  uint64_t k = UINT64_MAX;
  bool moved = false;
  for (size_t c = 0; c < now.loops.size(); ++c) {
    if (then.loops[c].size() != now.loops[c].size()) return 0;
    for (size_t j = 0; j < now.loops[c].size(); ++j) {
      const Snapshot::Level& l0 = then.loops[c][j];
      const Snapshot::Level& l1 = now.loops[c][j];
      if (l0.serial != l1.serial || l1.remaining > l0.remaining) return 0;  // left, re-entered
      const uint64_t d = l0.remaining - l1.remaining;
      if (d == 0) continue;
      moved = true;
      k = std::min(k, (l1.remaining - 1) / d);
      // ctrl.break_unless (timing-only) leaves at trips_done >= its `trips`: the replayed trips
      // see trips_done up to l1.trips_done - 1 + k * d.
      const uint64_t t = system_.cores()[c]->sequencer().min_break_trips();
      if (t != UINT64_MAX) k = std::min(k, t >= l1.trips_done ? (t - l1.trips_done) / d : 0);
    }
  }
  if (!moved) return 0;
  for (size_t i = 0; i < now.stats.size(); ++i) {
    if (now.stats[i] < then.stats[i]) return 0;  // counters only grow; never expected
  }
  return k;
}

void FastForward::Skip(const Sampled& sampled, const Snapshot& then, const Snapshot& now,
                       uint64_t periods) {
  const Cycles shift = (now.cycle - then.cycle) * periods;
  for (Unit* u : units_) u->ShiftState(shift);
  auto& cores = system_.cores();
  for (size_t c = 0; c < cores.size(); ++c) {
    cores[c]->attribution().Shift(shift);
    for (size_t j = 0; j < now.loops[c].size(); ++j) {
      const uint64_t d = then.loops[c][j].remaining - now.loops[c][j].remaining;
      if (d > 0) cores[c]->sequencer().SkipTrips(j, d * periods);
    }
  }
  std::vector<uint64_t> delta(now.stats.size());
  for (size_t i = 0; i < delta.size(); ++i) delta[i] = now.stats[i] - then.stats[i];
  AdvanceStats(delta, periods);
  const size_t lead = static_cast<size_t>(sampled.core);
  trips_skipped_ +=
      (then.loops[lead][sampled.level].remaining - now.loops[lead][sampled.level].remaining) *
      periods;
  cycles_skipped_ += shift;
}

Cycles FastForward::AfterStep(Cycles now) {
  if (!enabled_) return Cycles(0);
  auto& cores = system_.cores();
  if (leader_ < 0 || cores[static_cast<size_t>(leader_)]->sequencer().loops().empty()) {
    leader_ = Leader();
    if (leader_ < 0) return Cycles(0);
  }
  Sequencer& seq = cores[static_cast<size_t>(leader_)]->sequencer();
  const int level = seq.TakeTripBoundary();
  if (level < 0) return Cycles(0);
  const size_t lvl = static_cast<size_t>(level);
  const uint64_t serial = seq.loops()[lvl].serial;
  if (sampled_.size() <= lvl) sampled_.resize(lvl + 1);
  Sampled& sampled = sampled_[lvl];
  if (sampled.core != leader_ || sampled.serial != serial) {
    sampled = Sampled{leader_, lvl, serial, 0, {}};
  }
  const uint64_t b = sampled.boundaries++;
  if (b >= kDenseTrips && b % kSparseStride != 0) return Cycles(0);
  Snapshot s;
  if (!Take(now, s)) {
    enabled_ = false;  // a unit that cannot be snapshotted: no fast-forward in this run
    return Cycles(0);
  }
  for (auto it = sampled.history.rbegin(); it != sampled.history.rend(); ++it) {
    const Snapshot& then = *it;
    const uint64_t k = Periods(then, s);
    if (k == 0) continue;
    Skip(sampled, then, s, k);
    const Cycles shift = (s.cycle - then.cycle) * k;
    for (Sampled& x : sampled_) x.history.clear();
    return shift;
  }
  sampled.history.push_back(std::move(s));
  if (sampled.history.size() > kHistory) sampled.history.pop_front();
  return Cycles(0);
}

}  // namespace tpusim::sim
