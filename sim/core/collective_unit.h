// CollectiveUnit: a core's ICI collective engine (ici.* instructions). One collective at a time: it
// announces the arrival to the SyncHub, which applies the data effect once the whole group is there
// (sync_hub.h), then moves the bytes as real transfers over the TransferNetwork:
//  * all_reduce of S bytes over n ranks: the bidirectional ring algorithm, 2(n-1) steps; the data
//    is split in two halves that go round the ring in opposite directions, each in n chunks: at
//    step s rank r sends one chunk of the first half to rank r+1 and one of the second half to rank
//    r-1 (reduce-scatter for s < n-1, then all-gather), and starts step s+1 once its own step-s
//    sends are done and both neighbours' step-s chunks have arrived. A ring uses both directions of
//    every link it crosses (ICI links are full duplex [P S9]), so the ring bandwidth B is twice the
//    link's: cost ~ 2(n-1)/n * S / B + 2(n-1) * (hop latency + issue) (DESIGN.md §4 "ICI", the
//    closed form of issue 6). The reduction's VPU time is not charged (assumption: it hides under
//    the next transfer). An all-reduce over every core of a slice with two or more torus
//    dimensions (Interconnect::ring_dimensions) runs that algorithm on
//    one dimension's rings at a time, as TPU pods do: reduce-scatter along each dimension in turn
//    (each on the chunk the previous one left), then all-gather back in reverse order, 2 sum(n_d -
//    1) steps of one hop each instead of 2(n-1) (system.ici.dimension_rings).
//  * all_gather / reduce_scatter: the n-1 steps of one chunk (count elements) each, half of it
//    each way round: (n-1)/n * S / B + (n-1) * hop latency.
//  * all_to_all: one step, count elements to every other rank at once.
//  * collective_permute: one step, count elements to each target.
// Ranks follow the Interconnect's ring order (a snake through the torus,
// Interconnect::RingPosition), not the group order, so each step of a full-slice ring is one hop;
// rank r+1's route is the dimension-ordered route, so a subgroup laid out against the torus shares
// links and the contention shows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "isa/program.h"
#include "sim/chip/interconnect.h"
#include "sim/chip/transfer_network.h"
#include "sim/core/messages.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class CollectiveUnit : public Unit {
 public:
  CollectiveUnit(std::string path, int core, const isa::Program& program, const Interconnect* ic,
                 TransferNetwork* network, Cycles issue_cycles, ErrorSink* errors, int unit_id,
                 StatRegistry& stats);

  /// Network connection ids of every core's collective unit (for arrival notifications), by core:
  /// one list the System owns and every core reads (n ints, not n per core).
  void set_peers(const std::vector<int>* peer_conns) { peer_conns_ = peer_conns; }
  int connection_id() const { return conn_.id; }
  Port<Command>& commands() { return commands_; }
  Port<SyncMessage>& go() { return go_; }
  void set_reports(Port<Report>* reports) { reports_ = reports; }
  void set_hub(Port<SyncMessage>* hub) { hub_ = hub; }

  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;

 private:
  struct Send {
    int peer;
    uint64_t bytes;
    bool ccw = false;  // the counter-clockwise ring (prefers the - link direction on ties)
  };
  // One ring of a collective, as this core sees it: its rank, its neighbours, and the elements of
  // each half (clockwise, counter-clockwise) the ring moves.
  struct Ring {
    int n = 1, rank = 0, ccw_rank = 0, right = 0, left = 0;
    uint64_t cw_count = 0, ccw_count = 0;
  };
  // What this core sends and expects at each step of a collective. A ring collective's steps
  // follow from its rings (SendsAt computes step s's two sends), so a core holds O(1) state however
  // many cores the ring has, not a list of 2 (n - 1) steps; the one-step kinds list their sends.
  struct Plan {
    enum class Kind : uint8_t { kNone, kAllReduce, kGatherRing, kOneStep } kind = Kind::kNone;
    int steps = 0;
    // kAllReduce: the reduce-scatter rings in order, then the same rings backwards for the
    // all-gather (one ring through every core, or one per dimension of the slice:
    // Interconnect::ring_dimensions); kGatherRing: its one ring.
    std::vector<Ring> rings;
    uint64_t eb = 0;
    std::vector<Send> one_step;  // kOneStep: its sends
    int one_step_receives = 0;
    /// Step s's sends (into `out`, cleared first).
    void SendsAt(int s, std::vector<Send>& out) const;
    /// The chunks step s expects to arrive.
    int ReceivesAt() const { return kind == Kind::kOneStep ? one_step_receives : 2; }
  };
  Plan MakePlan(const isa::Instruction& inst, const std::vector<int>& group) const;
  // An all-reduce's rings: `snake` (the one ring through the group), or one per dimension of the
  // slice when the group is every core (Interconnect::ring_dimensions).
  std::vector<Ring> AllReduceRings(const Ring& snake, int group_size) const;
  void Advance(Cycles now);

  std::string path_;
  int core_;
  const isa::Program& program_;
  const Interconnect* ic_;
  TransferNetwork::Connection conn_;
  const std::vector<int>* peer_conns_ = nullptr;
  ErrorSink* errors_;
  int unit_id_;
  Port<Command> commands_;
  Port<SyncMessage> go_;
  Port<Report>* reports_ = nullptr;
  Port<SyncMessage>* hub_ = nullptr;

  std::optional<Command> active_;
  bool running_ = false;  // the hub said go
  uint64_t instance_ = 0;
  Plan plan_;
  std::vector<Send> step_sends_;  // scratch: the sends of the current step
  size_t step_ = 0;
  bool step_sent_ = false;
  int sends_pending_ = 0;
  Cycles since_{0};
  std::map<std::pair<uint64_t, uint64_t>, int> arrived_;  // (instance, step) -> chunks arrived

  Counter* collectives_;
  Counter* bytes_sent_;
  Counter* busy_;
};

}  // namespace tpusim::sim
