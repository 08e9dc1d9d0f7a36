#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <numeric>
#include <string>
#include <utility>

#include "common/check.h"

namespace tpusim::sim {

void Engine::StepAll(Cycles now) {
  const size_t n = units_.size();
  if (perm_.size() != n) {
    perm_.resize(n);
    std::iota(perm_.begin(), perm_.end(), 0);
  }
  switch (order_) {
    case StepOrder::kForward:
      for (size_t i = 0; i < n; ++i) units_[i]->Step(now);
      break;
    case StepOrder::kReverse:
      for (size_t i = n; i-- > 0;) units_[i]->Step(now);
      break;
    case StepOrder::kShuffled:
      // Fisher-Yates with xorshift64: deterministic for a seed, different every cycle.
      for (size_t i = n; i > 1; --i) {
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 7;
        rng_ ^= rng_ << 17;
        std::swap(perm_[i - 1], perm_[rng_ % i]);
      }
      for (size_t i : perm_) units_[i]->Step(now);
      break;
  }
}

StatusOr<Cycles> Engine::Run(Cycles max_cycles) {
  Cycles now(0);
  events_ = 0;
  while (true) {
    StepAll(now);
    ++events_;
    if (errors_ != nullptr && errors_->has_error()) return errors_->status();
    if (after_step_) now = now + Cycles(after_step_(now));
    if (observer_ && events_ % kObserverInterval == 0) observer_(now);
    if (deadline_ && events_ % kDeadlineCheckInterval == 0 &&
        std::chrono::steady_clock::now() > *deadline_) {
      return ResourceExhausted(fmt::format(
          "simulation exceeded the wall-clock limit of {:g} seconds at cycle {} (--max-seconds / "
          "SimOptions::max_seconds)",
          deadline_seconds_, now.value()));
    }
    Cycles next = kNever;
    for (Unit* u : units_) {
      Cycles t = u->NextWork(now);
      TPUSIM_CHECK(t > now) << u->path() << " asked for work at cycle " << t.value()
                            << " which is not after the current cycle " << now.value();
      next = EarliestOf(next, t);
    }
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
