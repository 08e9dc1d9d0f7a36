#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/check.h"

namespace tpusim::sim {

void Engine::AddUnit(Unit* unit) {
  unit->set_waker(this, units_.size());
  units_.push_back(unit);
}

void Engine::Wake(size_t unit, Cycles at) {
  if (!in_run_ || at >= next_[unit]) return;
  next_[unit] = at;
  Schedule(unit, at);
}

void Engine::Schedule(size_t u, Cycles at) {
  auto [it, added] = calendar_.try_emplace(at.value());
  if (added && !spare_.empty()) {
    it->second = std::move(spare_.back());
    spare_.pop_back();
  }
  it->second.push_back(u);
}

void Engine::DropBucket(std::map<uint64_t, std::vector<size_t>>::iterator it) {
  it->second.clear();
  spare_.push_back(std::move(it->second));
  calendar_.erase(it);
}

void Engine::CollectDue(Cycles now) {
  due_.clear();
  if (!calendar_.empty() && calendar_.begin()->first == now.value()) {
    auto it = calendar_.begin();
    std::vector<size_t>& bucket = it->second;
    if (!std::is_sorted(bucket.begin(), bucket.end())) std::sort(bucket.begin(), bucket.end());
    for (size_t u : bucket) {
      if (next_[u] != now) continue;  // stale, or already taken at this cycle
      next_[u] = kNever;
      due_.push_back(u);
    }
    DropBucket(it);
  }
  const bool extra = !always_.empty() || !watchers_.empty();
  due_.insert(due_.end(), always_.begin(), always_.end());
  for (size_t u : watchers_) {
    watching_[u] = false;
    due_.push_back(u);
  }
  watchers_.clear();
  if (extra) {
    std::sort(due_.begin(), due_.end());
    due_.erase(std::unique(due_.begin(), due_.end()), due_.end());
    for (size_t u : due_) next_[u] = kNever;  // rescheduled from scratch after the step
  }
}

void Engine::StepDue(Cycles now) {
  switch (order_) {
    case StepOrder::kForward:
      break;
    case StepOrder::kReverse:
      std::reverse(due_.begin(), due_.end());
      break;
    case StepOrder::kShuffled:
      // Fisher-Yates with xorshift64: deterministic for a seed, different every cycle.
      for (size_t i = due_.size(); i > 1; --i) {
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 7;
        rng_ ^= rng_ << 17;
        std::swap(due_[i - 1], due_[rng_ % i]);
      }
      break;
  }
  for (size_t u : due_) {
    units_[u]->Step(now);
    stepped_[u] = now;
  }
  unit_steps_ += due_.size();
}

void Engine::Reschedule(size_t u, Cycles now) {
  const Cycles t = units_[u]->NextWork(now);
  TPUSIM_CHECK(t > now) << units_[u]->path() << " asked for work at cycle " << t.value()
                        << " which is not after the current cycle " << now.value();
  if (t < next_[u]) {
    next_[u] = t;
    Schedule(u, t);
  }
  if (units_[u]->StepAtNextEvent() && !watching_[u]) {
    watching_[u] = true;
    watchers_.push_back(u);
  }
}

void Engine::RescheduleAll(Cycles now) {
  while (!calendar_.empty()) DropBucket(calendar_.begin());
  watchers_.clear();
  std::fill(watching_.begin(), watching_.end(), false);
  std::fill(next_.begin(), next_.end(), kNever);
  for (size_t u = 0; u < units_.size(); ++u) Reschedule(u, now);
  rescheduled_all_ = true;
}

void Engine::StepAllNow() {
  TPUSIM_CHECK(in_run_) << "StepAllNow outside a run";
  for (size_t u = 0; u < units_.size(); ++u) {
    if (stepped_[u] != now_) {
      units_[u]->Step(now_);
      stepped_[u] = now_;
      ++unit_steps_;
    }
    units_[u]->Sync(now_);
  }
  RescheduleAll(now_);
}

Cycles Engine::NextCycle() {
  while (!calendar_.empty()) {
    auto it = calendar_.begin();
    const Cycles cycle(it->first);
    for (size_t u : it->second) {
      if (next_[u] == cycle) return cycle;
    }
    DropBucket(it);  // every entry stale: the units were rescheduled since
  }
  return kNever;
}

StatusOr<Cycles> Engine::Run(Cycles max_cycles) {
  const size_t n = units_.size();
  Cycles now(0);
  events_ = 0;
  unit_steps_ = 0;
  while (!calendar_.empty()) DropBucket(calendar_.begin());
  due_.clear();
  always_.clear();
  watchers_.clear();
  watching_.assign(n, false);
  stepped_.assign(n, kNever);
  next_.assign(n, now);  // every unit is stepped at cycle 0
  for (size_t u = 0; u < n; ++u) {
    if (step_every_unit_ || !units_[u]->event_driven()) {
      always_.push_back(u);
      next_[u] = kNever;
    } else {
      Schedule(u, now);
    }
  }
  in_run_ = true;
  struct Leave {
    bool& flag;
    ~Leave() { flag = false; }
  } leave{in_run_};
  while (true) {
    now_ = now;
    CollectDue(now);
    StepDue(now);
    ++events_;
    if (errors_ != nullptr && errors_->has_error()) return errors_->status();
    rescheduled_all_ = false;
    if (after_step_) {
      const Cycles shift = after_step_(now);
      if (shift > Cycles(0)) {
        now = now + shift;
        now_ = now;
        RescheduleAll(now);
      }
    }
    if (!rescheduled_all_) {
      for (size_t u : due_) Reschedule(u, now);
    }
    if (observer_ && events_ % kObserverInterval == 0) observer_(now);
    if (deadline_ && events_ % kDeadlineCheckInterval == 0 &&
        std::chrono::steady_clock::now() > *deadline_) {
      return ResourceExhausted(fmt::format(
          "simulation exceeded the wall-clock limit of {:g} seconds at cycle {} (--max-seconds / "
          "SimOptions::max_seconds)",
          deadline_seconds_, now.value()));
    }
    const Cycles next = NextCycle();
    if (next == kNever) break;
    if (next > max_cycles) {
      return ResourceExhausted("simulation exceeded the cycle limit of " +
                               std::to_string(max_cycles.value()) +
                               " cycles (--max-cycles / SimOptions::max_cycles)");
    }
    now = next;
  }
  return now;
}

}  // namespace tpusim::sim
