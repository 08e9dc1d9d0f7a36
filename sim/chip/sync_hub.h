// SyncHub: the rendezvous point of sync.barrier and of the collectives (ici.*). Each core's
// sequencer sends barrier arrivals, each core's ICI unit sends collective arrivals; once every
// member of the group (or of the permutation) has arrived with matching instructions, the hub
// releases them. For a collective it applies the whole data effect at that cycle (every member's
// source and destination regions are scoreboard-locked on its core from its arrival until its own
// completion, so nothing can observe the moment), then the members' ICI units move the bytes for
// the timing. Modelled cost: one cycle each way (ports of latency 1); the real barrier network is
// not published (assumption).
//
// Cost: a step touches the cores whose arrivals are delivered (Delivered, not a scan of every
// core) and the cores waiting in the hub; a waiting core whose group still misses the member it
// missed last time is skipped without recomputing its group.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "isa/machine_state.h"
#include "isa/program.h"
#include "sim/core/messages.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class SyncHub : public Unit {
 public:
  SyncHub(int cores, const isa::Program& program, isa::MachineState* state, ErrorSink* errors,
          int unit_id);

  Port<SyncMessage>& barrier_in(int core) { return barrier_in_[core]; }
  Port<SyncMessage>& collective_in(int core) { return collective_in_[core]; }
  void set_outputs(int core, Port<SyncMessage>* barrier_release, Port<SyncMessage>* collective_go) {
    barrier_out_[core] = barrier_release;
    collective_out_[core] = collective_go;
  }

  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  void Delivered(uint32_t port, Cycles at) override;
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;
  /// The id the next collective instance gets (fast-forward writes instances relative to it).
  uint64_t next_instance() const { return next_instance_; }

 private:
  void TryRelease(Cycles now, int core, bool collective);
  void Take(int core, bool collective, Cycles now);
  void RebuildArrivals();
  Port<SyncMessage>& in(uint64_t port) {
    return port % 2 == 0 ? barrier_in_[port / 2] : collective_in_[port / 2];
  }

  std::string path_ = "sync_hub";
  const isa::Program& program_;
  isa::MachineState* state_;  // null: timing-only (no values)
  ErrorSink* errors_;
  int unit_id_;
  std::deque<Port<SyncMessage>> barrier_in_, collective_in_;
  std::vector<Port<SyncMessage>*> barrier_out_, collective_out_;
  std::vector<std::optional<SyncMessage>> barrier_at_, collective_at_;
  // Per core: the member its barrier / collective group missed at its last check (-1: unknown).
  std::vector<int> barrier_missing_, collective_missing_;
  std::set<int> waiting_;  // cores with an arrival in barrier_at_ or collective_at_
  // (delivery cycle, port) of arrivals sent: port 2c is barrier_in(c), 2c + 1 collective_in(c).
  std::priority_queue<std::pair<uint64_t, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>,
                      std::greater<>>
      arrivals_;
  uint64_t next_instance_ = 1;
};

}  // namespace tpusim::sim
