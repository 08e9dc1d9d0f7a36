#include "sim/engine/engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/port.h"
#include "sim/engine/stats.h"

namespace tpusim::sim {
namespace {

// A unit that forwards every token it receives to its neighbour after `delay` cycles, counting.
class Relay : public Unit {
 public:
  // event_driven: its port wakes it, so the engine steps it only when a token arrives.
  Relay(std::string path, StatRegistry& stats, uint64_t delay, bool event_driven = false)
      : path_(std::move(path)), delay_(delay), event_driven_(event_driven) {
    received_ = stats.AddGroup(path_).Add("received", StatUnit::kCount, "tokens received");
    if (event_driven_) in_.set_receiver(this);
  }
  bool event_driven() const override { return event_driven_; }
  void Connect(Port<int>* out) { out_ = out; }
  Port<int>& in() { return in_; }
  const std::string& path() const override { return path_; }
  void Step(Cycles now) override {
    while (in_.HasReady(now)) {
      int v = in_.Pop(now);
      received_->Add(1);
      if (v > 0) out_->Send(now, v - 1, Cycles(delay_ - 1));
    }
  }
  Cycles NextWork(Cycles) const override { return in_.NextArrival(); }

 private:
  std::string path_;
  uint64_t delay_;
  bool event_driven_;
  Port<int> in_;
  Port<int>* out_ = nullptr;
  Counter* received_;
};

Cycles RunRing(StepOrder order, StatRegistry& stats) {
  Relay a("a", stats, 3), b("b", stats, 5);
  a.Connect(&b.in());
  b.Connect(&a.in());
  a.in().Send(Cycles(0), 10);  // delivered at cycle 1
  Engine engine(order, 7);
  engine.AddUnit(&a);
  engine.AddUnit(&b);
  auto end = engine.Run(Cycles(1000));
  EXPECT_TRUE(end.ok());
  return *end;
}

TEST(EngineTest, SkipsIdleStretchesAndEndsWhenIdle) {
  StatRegistry stats;
  Cycles end = RunRing(StepOrder::kForward, stats);
  // Token 10 arrives at a at 1; a -> b takes 3 cycles, b -> a 5: tokens 10..0 are received at
  // 1, 4, 9, 12, 17, 20, 25, 28, 33, 36, 41 (11 receptions, 6 by a and 5 by b).
  EXPECT_EQ(end.value(), 41u);
  EXPECT_EQ(*stats.Get("a", "received"), 6u);
  EXPECT_EQ(*stats.Get("b", "received"), 5u);
}

TEST(EngineTest, StepOrderDoesNotChangeResults) {
  StatRegistry s1, s2, s3;
  Cycles forward = RunRing(StepOrder::kForward, s1);
  EXPECT_EQ(forward, RunRing(StepOrder::kReverse, s2));
  EXPECT_EQ(forward, RunRing(StepOrder::kShuffled, s3));
  EXPECT_EQ(s1.Flatten(), s2.Flatten());
  EXPECT_EQ(s1.Flatten(), s3.Flatten());
}

// Eight event-driven relays in a ring, two tokens travelling: each relay is stepped at cycle 0 and
// at its receptions only, and the run equals stepping every relay at every event cycle.
struct RingRun {
  Cycles end;
  uint64_t events = 0, unit_steps = 0;
  std::map<std::string, uint64_t> stats;
};
RingRun RunBigRing(bool step_every_unit) {
  StatRegistry stats;
  std::vector<std::unique_ptr<Relay>> relays;
  for (int i = 0; i < 8; ++i) {
    relays.push_back(
        std::make_unique<Relay>(std::string(1, static_cast<char>('a' + i)), stats, 2 + i % 3, true));
  }
  for (int i = 0; i < 8; ++i) relays[i]->Connect(&relays[(i + 1) % 8]->in());
  relays[0]->in().Send(Cycles(0), 20);
  relays[4]->in().Send(Cycles(0), 13, Cycles(6));
  Engine engine(StepOrder::kForward, 1, step_every_unit);
  for (auto& r : relays) engine.AddUnit(r.get());
  auto end = engine.Run(Cycles(10000));
  EXPECT_TRUE(end.ok());
  return RingRun{*end, engine.events(), engine.unit_steps(), stats.Flatten()};
}

TEST(EngineTest, StepsOnlyTheUnitsWithWork) {
  const RingRun scheduled = RunBigRing(false), every = RunBigRing(true);
  EXPECT_EQ(scheduled.end, every.end);
  EXPECT_EQ(scheduled.events, every.events);
  EXPECT_EQ(scheduled.stats, every.stats);
  uint64_t received = 0;
  for (const auto& [name, v] : scheduled.stats) received += v;
  EXPECT_EQ(received, 21u + 14u);
  EXPECT_EQ(scheduled.unit_steps, 8u + received);  // cycle 0, then one step per reception
  EXPECT_EQ(every.unit_steps, 8u * every.events);
}

TEST(EngineTest, CycleLimitIsResourceExhausted) {
  StatRegistry stats;
  Relay a("a", stats, 3), b("b", stats, 5);
  a.Connect(&b.in());
  b.Connect(&a.in());
  a.in().Send(Cycles(0), 1000);
  Engine engine;
  engine.AddUnit(&a);
  engine.AddUnit(&b);
  auto end = engine.Run(Cycles(100));
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(end.status().message().find("100"), std::string::npos);
}

TEST(EngineTest, WallClockDeadlineIsResourceExhaustedNamingTheLimit) {
  StatRegistry stats;
  Relay a("a", stats, 3), b("b", stats, 5);
  a.Connect(&b.in());
  b.Connect(&a.in());
  a.in().Send(Cycles(0), 1'000'000);  // far more events than one deadline check interval
  Engine engine;
  engine.AddUnit(&a);
  engine.AddUnit(&b);
  // A deadline already in the past: the run stops at the first check, whatever the machine's speed.
  engine.set_deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1), 2.5);
  auto end = engine.Run(Cycles(uint64_t{1} << 40));
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(end.status().message().find("wall-clock limit of 2.5 seconds"), std::string::npos)
      << end.status().message();
  EXPECT_EQ(engine.events(), Engine::kDeadlineCheckInterval);
}

TEST(EngineTest, FarDeadlineDoesNotChangeTheResult) {
  StatRegistry stats;
  Relay a("a", stats, 3), b("b", stats, 5);
  a.Connect(&b.in());
  b.Connect(&a.in());
  a.in().Send(Cycles(0), 10);
  Engine engine;
  engine.AddUnit(&a);
  engine.AddUnit(&b);
  engine.set_deadline(std::chrono::steady_clock::now() + std::chrono::hours(1), 3600);
  auto end = engine.Run(Cycles(1000));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->value(), 41u);  // as SkipsIdleStretchesAndEndsWhenIdle
}

TEST(PortTest, CapacityCountsThisCyclesPopsUntilNextCycle) {
  Port<int> p(Cycles(1), 1);
  EXPECT_TRUE(p.CanSend(Cycles(0)));
  p.Send(Cycles(0), 5);
  EXPECT_FALSE(p.CanSend(Cycles(0)));
  EXPECT_FALSE(p.HasReady(Cycles(0)));  // latency >= 1: never visible in the cycle it was sent
  EXPECT_TRUE(p.HasReady(Cycles(1)));
  EXPECT_EQ(p.Pop(Cycles(1)), 5);
  EXPECT_FALSE(p.CanSend(Cycles(1)));  // whether the receiver stepped first must not matter
  EXPECT_TRUE(p.CanSend(Cycles(2)));
}

}  // namespace
}  // namespace tpusim::sim
