// Port<T>: a point-to-point, latency >= 1, bounded queue of messages from one sender unit to one
// receiver unit (SST's Link). Messages sent at cycle t with latency L (plus an optional extra
// delay) are delivered at t + L + extra; they come out in delivery order, ties in send order.
//
// Order independence: a message sent at t is never visible at t. The capacity check counts a
// message the receiver popped during the current cycle as still occupying its slot until the next
// cycle, so whether the receiver was stepped before or after the sender in cycle t does not change
// CanSend(t).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/check.h"
#include "common/units.h"
#include "sim/engine/snapshot.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

template <typename T>
class Port {
 public:
  /// latency: cycles from Send to delivery, >= 1. capacity: messages in flight plus queued (>= 1).
  explicit Port(Cycles latency = Cycles(1), uint64_t capacity = UINT64_MAX)
      : latency_(latency), capacity_(capacity) {
    TPUSIM_CHECK(latency.value() >= 1) << "a port needs latency >= 1 cycle";
    TPUSIM_CHECK(capacity >= 1);
  }

  Cycles latency() const { return latency_; }

  /// The unit that receives on this port, and the port's number for it: every Send tells it the
  /// delivery cycle (Unit::Delivered, which wakes it; unit.h).
  void set_receiver(Unit* unit, uint32_t number = 0) {
    receiver_ = unit;
    receiver_number_ = number;
  }

  /// True if a message may be sent at `now` without exceeding the capacity.
  bool CanSend(Cycles now) const {
    uint64_t occupied = heap_.size() + (pop_cycle_ == now ? pops_this_cycle_ : 0);
    return occupied < capacity_;
  }

  /// Sends `msg`, delivered at now + latency + extra. The caller checked CanSend.
  void Send(Cycles now, T msg, Cycles extra = Cycles(0)) {
    TPUSIM_CHECK(CanSend(now)) << "port over capacity";
    const Cycles deliver = now + latency_ + extra;
    heap_.push_back(Entry{deliver, next_seq_++, std::move(msg)});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    if (receiver_ != nullptr) receiver_->Delivered(receiver_number_, deliver);
  }

  /// True if a message is delivered at or before `now`.
  bool HasReady(Cycles now) const { return !heap_.empty() && heap_.front().deliver <= now; }

  /// The first delivered message (HasReady must hold).
  const T& Front() const { return heap_.front().msg; }

  /// Removes and returns the first delivered message (HasReady must hold).
  T Pop(Cycles now) {
    TPUSIM_CHECK(HasReady(now));
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    T msg = std::move(heap_.back().msg);
    heap_.pop_back();
    if (pop_cycle_ != now) {
      pop_cycle_ = now;
      pops_this_cycle_ = 0;
    }
    ++pops_this_cycle_;
    return msg;
  }

  /// Delivery cycle of the earliest message, or kNever.
  Cycles NextArrival() const { return heap_.empty() ? kNever : heap_.front().deliver; }

  bool empty() const { return heap_.empty(); }

  /// Fast-forward (snapshot.h): writes the messages in flight in delivery order (their delivery
  /// cycles relative to the base, each message by `write(w, msg)`). The pops counted for the
  /// current cycle only matter within it, so they are not state.
  void Save(StateWriter& w, const std::function<void(StateWriter&, const T&)>& write) const {
    std::vector<const Entry*> order;
    for (const Entry& e : heap_) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return *b > *a; });
    w.Value(order.size());
    for (const Entry* e : order) {
      w.Time(e->deliver);
      write(w, e->msg);
    }
  }
  /// Advances every delivery cycle by `delta`, and each message's own cycles by `shift(msg)`.
  void Shift(Cycles delta, const std::function<void(T&)>& shift = nullptr) {
    for (Entry& e : heap_) {
      e.deliver = ShiftTime(e.deliver, delta);
      if (shift) shift(e.msg);
    }
  }
  uint64_t size() const { return heap_.size(); }

 private:
  struct Entry {
    Cycles deliver;
    uint64_t seq;
    T msg;
    bool operator>(const Entry& o) const {
      return deliver != o.deliver ? deliver > o.deliver : seq > o.seq;
    }
  };
  Cycles latency_;
  uint64_t capacity_;
  Unit* receiver_ = nullptr;
  uint32_t receiver_number_ = 0;
  uint64_t next_seq_ = 0;
  Cycles pop_cycle_ = kNever;
  uint64_t pops_this_cycle_ = 0;
  std::vector<Entry> heap_;  // a min-heap on (deliver, seq)
};

}  // namespace tpusim::sim
