// TransferNetwork: every bandwidth resource of the system (each chip's HBM, or each core's HBM half
// on v2/v3; each chip's host link; each ICI link direction; each on-chip core-to-core path) and the
// bulk transfers crossing them, as one unit on the timeline.
//
// Model (DESIGN.md §4 "Memory", "ICI"): each resource is a fair-share bandwidth server. A transfer
// uses a set of resources (a DMA from HBM uses the HBM server; a remote write uses every ICI link
// direction on its route) and moves, each cycle, the smallest of its equal shares: min over its
// resources r of rate_r / n_r, n_r = transfers active on r. A share left unused by a transfer
// throttled elsewhere is not redistributed (no max-min progressive filling), which is exact for the
// common cases — transfers on one resource, or a ring whose steps each use one link — and
// conservative otherwise.
//
// Exact fractional rates: rates are fixed point with kFracBits fraction bits (bytes/cycle * 2^16,
// the configured rate rounded once to 1/65536 byte/cycle). A transfer keeps the remainder of (rate
// * cycles + carry) / n between events, so jumping over an idle stretch of D cycles moves exactly
// the bytes D single-cycle steps would, and the completion cycle is solved in closed form (no
// per-cycle stepping). A transfer of B bytes alone on a resource of rate r takes ceil(B / r)
// cycles.
//
// Cost: a step touches only what changes — the connections with requests delivered (found by
// Delivered, not by scanning), the completing transfers (a min-heap of completion cycles) and the
// transfers sharing a resource whose number of transfers changed; every other transfer's progress
// and every resource's busy cycles are brought up to date lazily (exact, by the same remainder
// arithmetic), and all of them by Sync before a fast-forward snapshot.
//
// Timing of one transfer requested at cycle t over a request port of latency I (the DMA issue
// cycles): served from t + I, its last byte moves in cycle t + I + ceil(B / share) - 1, and its
// completion is delivered at t + I + ceil(B / share) + max(1, L), L = the transfer's latency (HBM
// latency, or hops * ICI hop latency). So cost = issue + bytes / bandwidth share + latency
// (DESIGN.md §4).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "common/units.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"
#include "sim/trace/trace_sink.h"

namespace tpusim::sim {

/// How a transfer uses a resource (which byte counter it adds to).
enum class UseKind { kRead, kWrite, kThrough };

struct ResourceUse {
  int resource = 0;
  UseKind kind = UseKind::kThrough;
};

/// A bulk transfer request; `tag` is echoed back in TransferDone.
struct TransferRequest {
  uint64_t tag = 0;
  Bytes bytes;
  std::vector<ResourceUse> uses;  // at least one resource
  Cycles latency;                 // added after the last byte (first-byte latency, hop latency)
  int notify = -1;                // if >= 0: a connection that also gets a TransferDone{notify_tag}
  uint64_t notify_tag = 0;        //   (the destination of a remote write learns of its arrival)
};

struct TransferDone {
  uint64_t tag = 0;
  Cycles last_byte;  // cycle after the last byte moved
};

class TransferNetwork : public Unit {
 public:
  static constexpr int kFracBits = 16;

  TransferNetwork(std::string path, StatRegistry& stats);

  /// Adds a resource of `bytes_per_cycle` (> 0) with stats group `path` (counters busy_cycles,
  /// bytes_read, bytes_written, bytes). Returns its id. Construction time only.
  int AddResource(const std::string& path, double bytes_per_cycle);

  /// A requester's connection: it sends requests on `request` (latency = `issue_cycles`, >= 1) and
  /// receives completions on `done`. Construction time only; the network owns both ports.
  struct Connection {
    Port<TransferRequest>* request;
    Port<TransferDone>* done;
    int id;  // for TransferRequest::notify
  };
  /// What the tags delivered to a connection are (for fast-forward snapshots, which write
  /// identifiers relative to their counters): sync flag numbers (a sequencer's arrivals), the
  /// instruction sequence numbers of core `core` (a DMA engine), or collective step tags
  /// (instance << 20 | step << 1 | arrival bit, a collective unit).
  enum class TagKind { kFlag, kSeq, kCollective };
  Connection Connect(Cycles issue_cycles, TagKind tags = TagKind::kFlag, int core = 0);

  /// Fast-forward (sim/engine/snapshot.h): a tag as its connection's kind says; a request sent on
  /// connection `conn` (its tag for `conn`, its notify tag for the notified connection).
  void WriteTag(StateWriter& w, size_t conn, uint64_t tag) const;
  void WriteRequest(StateWriter& w, size_t conn, const TransferRequest& r) const;
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;

  /// Fixed-point rate (bytes/cycle * 2^kFracBits) of a resource.
  uint64_t rate_fp(int resource) const { return resources_[resource].rate_fp; }
  int resource_count() const { return static_cast<int>(resources_.size()); }
  const std::string& resource_path(int resource) const { return resources_[resource].path; }

  /// Reports every change of a resource's total rate (bytes/cycle over its active transfers) to
  /// `trace` (TraceSink::Bandwidth; resource ids as AddResource returned them). Null: none.
  void set_trace(TraceSink* trace) { trace_ = trace; }

  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  void Delivered(uint32_t port, Cycles at) override;
  void Sync(Cycles now) override;

 private:
  struct Resource {
    std::string path;
    uint64_t rate_fp = 0;
    uint64_t active = 0;
    Counter* busy_cycles = nullptr;
    Counter* bytes_read = nullptr;
    Counter* bytes_written = nullptr;
    Counter* bytes = nullptr;
    Cycles busy_from{0};          // busy_cycles counts up to here
    std::vector<uint64_t> users;  // ids (keys of active_) of the transfers using it, with repeats
  };
  struct Active {
    uint64_t tag;
    size_t conn;
    uint64_t bytes;
    uint64_t remaining_fp;  // bytes * 2^kFracBits still to move
    std::vector<ResourceUse> uses;
    Cycles latency;
    int notify = -1;
    uint64_t notify_tag = 0;
    uint64_t num = 0;  // share = num / den fixed-point bytes per cycle
    uint64_t den = 1;
    uint64_t carry = 0;  // remainder of the last division, < den
    Cycles last{0};      // remaining_fp and carry are as of this cycle
    Cycles done{0};      // the cycle its last byte moves at the current share
  };
  using Entry = std::pair<uint64_t, uint64_t>;  // (cycle, connection or transfer id)
  using MinHeap = std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>;

  // Moves `a` up to `now` at its current share.
  static void Advance(Active& a, Cycles now);
  // Adds `r`'s busy cycles up to `now` (before its number of transfers changes).
  void AccountBusy(Resource& r, Cycles now);
  // The share of `a` from its resources' numbers of transfers; its completion cycle from `now`.
  void Recompute(uint64_t id, Active& a, Cycles now);
  void Complete(uint64_t id, Cycles now, std::vector<int>& touched);
  void Accept(size_t conn, TransferRequest req, Cycles now, std::vector<int>& touched);
  // Drops heap entries that no longer describe a pending completion or request.
  void DropStale();
  void RebuildHeaps();
  void TraceRates(Cycles now);

  std::string path_;
  StatRegistry& stats_;
  std::vector<Resource> resources_;
  std::deque<Port<TransferRequest>> requests_;
  std::deque<Port<TransferDone>> dones_;
  std::vector<std::pair<TagKind, int>> tag_kinds_;  // per connection
  std::map<uint64_t, Active> active_;  // by id = arrival order (deterministic)
  uint64_t next_id_ = 0;
  MinHeap completions_;  // (done, transfer id); stale entries dropped
  MinHeap requested_;    // (delivery, connection) of requests sent; stale entries dropped
  Cycles last_{0};       // the last cycle stepped or synced
  TraceSink* trace_ = nullptr;
  std::vector<double> traced_rate_;  // per resource: the last rate reported to trace_
};

}  // namespace tpusim::sim
