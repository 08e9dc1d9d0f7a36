// DmaEngine: one of a core's DMA engines (core.dma.engines). It runs its queue one descriptor at a
// time: the descriptor's bytes (n0 * n1 * n2 * elem_bytes) cross the TransferNetwork's resources —
// the core's HBM server (and the chip's host link for host transfers, or the ICI links of the route
// for a remote write) — at their fair share, so
//     cost = core.dma.issue_cycles + bytes / bandwidth share + latency (HBM latency, or hop
//     latencies)
// (transfer_network.h derives it).
//
// The indirect DMAs (dma.gather / dma.scatter: `count` slices whose HBM addresses come from an s32
// index list in VMEM) first read the index list and generate one slice address per descriptor issue
// slot, then move all slices' bytes as one transfer:
//     cost = core.dma.issue_cycles + IndirectSetupCycles + count * box bytes / bandwidth share
//            + HBM latency,
//     IndirectSetupCycles = ceil(4 * count / core.vmem.bytes_per_cycle) (the index list read from
//                           VMEM) + (count - 1) * core.dma.issue_cycles (one descriptor per slice,
//                           the first one's issue being the request's own issue cycles).
// A scatter with a combiner (read-modify-write) reads and writes every byte: it holds the HBM
// server twice (read and write use), so alone it takes 2 * bytes / bandwidth. The cost does not
// depend on the index values (out-of-bounds scatter slices cost as if written), so timing-only runs
// and value runs take the same cycles. Model assumption, after the TPU v4+ SparseCore indirect
// streams (an id list drives the HBM addresses; optional read-modify-add at the destination —
// Jouppi et al., "TPU v4", ISCA 2023); the setup terms are ours, not published figures.
//
// When the last byte has landed the data effect is applied, the
// sequencer is told (it adds 1 to the DMA's flag) and, for a remote write, the destination core's
// sequencer has been notified by the network (it adds 1 to `dst_flag`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/machine_state.h"
#include "sim/chip/interconnect.h"
#include "sim/chip/transfer_network.h"
#include "sim/core/messages.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class DmaEngine : public Unit {
 public:
  /// `(*notify_conns)[c]`: the network connection id of global core c's sequencer (remote
  /// arrivals); one list shared by every engine of the system (not null).
  DmaEngine(std::string path, int core, const Interconnect* ic, TransferNetwork* network,
            Cycles issue_cycles, int local_copy_resource,
            std::shared_ptr<const std::vector<int>> notify_conns,
            isa::MachineState* state, ErrorSink* errors, int unit_id, StatRegistry& stats,
            uint64_t vmem_bytes_per_cycle = 1);

  /// Cycles an indirect DMA of `count` slices spends reading its index list and issuing slice
  /// descriptors before its bytes start to move: ceil(4 * count / vmem_bytes_per_cycle) +
  /// (count - 1) * issue_cycles (derived in the file comment).
  static Cycles IndirectSetupCycles(uint64_t count, Cycles issue_cycles,
                                    uint64_t vmem_bytes_per_cycle);

  Port<Command>& commands() { return commands_; }
  void set_reports(Port<Report>* reports) { reports_ = reports; }
  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;

 private:
  TransferRequest MakeRequest(const Command& cmd) const;
  void SendPending(Cycles now);

  std::string path_;
  int core_;
  const Interconnect* ic_;
  const TransferNetwork* network_;
  TransferNetwork::Connection conn_;
  int local_copy_;
  std::shared_ptr<const std::vector<int>> notify_conns_;  // shared by every engine
  isa::MachineState* state_;  // null: timing-only (no values)
  ErrorSink* errors_;
  int unit_id_;
  Port<Command> commands_;
  Port<Report>* reports_ = nullptr;
  Cycles issue_cycles_;
  uint64_t vmem_bytes_per_cycle_;
  std::optional<Command> active_;
  Cycles active_since_{0};
  // An indirect DMA's transfer request, held until its index list is read and its slice
  // descriptors issued (cycle `pending_at_`).
  std::optional<TransferRequest> pending_;
  Cycles pending_at_{0};

  Counter* transfers_;
  Counter* bytes_;
  Counter* busy_;
};

}  // namespace tpusim::sim
