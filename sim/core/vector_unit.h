// VectorUnit: the VPU (vpu.* instructions) or the XLU (xlu.transpose) of a TensorCore. In-order and
// pipelined: an instruction starts when the previous one has issued all its vreg operations,
// occupies the unit for VectorCost::occupancy cycles and completes (its data effect applied, the
// scoreboard told) VectorCost::latency cycles after its start (isa/vpu_cost.h has the one formula).
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "config/chip_config.h"
#include "isa/machine_state.h"
#include "sim/core/messages.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class VectorUnit : public Unit {
 public:
  VectorUnit(std::string path, int core, const config::ChipConfig& config, isa::MachineState* state,
             ErrorSink* errors, int unit_id, StatRegistry& stats);

  Port<Command>& commands() { return commands_; }
  void set_reports(Port<Report>* reports) { reports_ = reports; }
  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;

 private:
  struct Pending {
    Cycles done;
    uint64_t order;
    Command cmd;
    bool operator>(const Pending& o) const {
      return done != o.done ? done > o.done : order > o.order;
    }
  };
  std::string path_;
  int core_;
  config::VpuConfig vpu_;
  int64_t vmem_bytes_per_cycle_;
  isa::MachineState* state_;  // null: timing-only (no values)
  ErrorSink* errors_;
  int unit_id_;
  Port<Command> commands_;
  Port<Report>* reports_ = nullptr;
  Cycles free_{0};
  uint64_t order_ = 0;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;

  Counter* ops_;
  Counter* elements_;
  Counter* busy_;
  Counter* flop_;
  Counter* vmem_read_;
  Counter* vmem_written_;
};

}  // namespace tpusim::sim
