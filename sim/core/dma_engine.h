// DmaEngine: one of a core's DMA engines (core.dma.engines). It runs its queue one descriptor at a
// time: the descriptor's bytes (n0 * n1 * n2 * elem_bytes) cross the TransferNetwork's resources —
// the core's HBM server (and the chip's host link for host transfers, or the ICI links of the route
// for a remote write) — at their fair share, so
//     cost = core.dma.issue_cycles + bytes / bandwidth share + latency (HBM latency, or hop
//     latencies)
// (transfer_network.h derives it). When the last byte has landed the data effect is applied, the
// sequencer is told (it adds 1 to the DMA's flag) and, for a remote write, the destination core's
// sequencer has been notified by the network (it adds 1 to `dst_flag`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/chip/interconnect.h"
#include "sim/chip/transfer_network.h"
#include "sim/core/data_path.h"
#include "sim/core/messages.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class DmaEngine : public Unit {
 public:
  /// `notify_conns[c]`: the network connection id of global core c's sequencer (remote arrivals).
  DmaEngine(std::string path, int core, const Interconnect* ic, TransferNetwork* network,
            Cycles issue_cycles, int local_copy_resource, std::vector<int> notify_conns,
            DataPath* data, ErrorSink* errors, int unit_id, StatRegistry& stats);

  Port<Command>& commands() { return commands_; }
  void set_reports(Port<Report>* reports) { reports_ = reports; }
  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;

 private:
  TransferRequest MakeRequest(const Command& cmd) const;

  std::string path_;
  int core_;
  const Interconnect* ic_;
  TransferNetwork::Connection conn_;
  int local_copy_;
  std::vector<int> notify_conns_;
  DataPath* data_;
  ErrorSink* errors_;
  int unit_id_;
  Port<Command> commands_;
  Port<Report>* reports_ = nullptr;
  std::optional<Command> active_;
  Cycles active_since_{0};

  Counter* transfers_;
  Counter* bytes_;
  Counter* busy_;
};

}  // namespace tpusim::sim
