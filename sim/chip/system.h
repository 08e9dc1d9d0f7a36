// System: the construction and wiring of everything one run simulates — the TransferNetwork with
// every chip's HBM, host link and ICI links (Interconnect), the SyncHub, and every TensorCore the
// program uses — on one Engine timeline.
#pragma once

#include <memory>
#include <vector>

#include "config/chip_config.h"
#include "isa/machine_state.h"
#include "isa/program.h"
#include "sim/chip/interconnect.h"
#include "sim/chip/sync_hub.h"
#include "sim/chip/transfer_network.h"
#include "sim/core/tensor_core.h"
#include "sim/engine/engine.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/stats.h"

namespace tpusim::sim {

class System {
 public:
  struct Options {
    MxuModelKind mxu_model = MxuModelKind::kFast;
    TraceSink* trace = nullptr;  // null: no trace
    bool instruction_profile = false;  // SimOptions::instruction_profile
  };
  /// Builds the units for `program` (its cores 0..n-1 on chips 0..). `config` is valid
  /// (config::ValidateChipConfig, which Simulator::Run checks); InvalidArgument when a core's
  /// units cannot be built from it (TensorCore::Create).
  static StatusOr<std::unique_ptr<System>> Create(const config::ChipConfig& config,
                                                  const isa::Program& program,
                                                  isa::MachineState* state, const Options& options);

  /// Adds every unit to `engine` (fixed order) and tells it where errors go.
  void AddTo(Engine& engine);
  /// Every unit, in the order AddTo adds them.
  std::vector<Unit*> units();
  SyncHub& hub() { return *hub_; }
  ErrorSink& errors() { return errors_; }
  std::shared_ptr<StatRegistry> stats() { return stats_; }
  std::vector<std::unique_ptr<TensorCore>>& cores() { return cores_; }
  const Interconnect& interconnect() const { return *interconnect_; }
  const TransferNetwork& network() const { return *network_; }
  std::vector<TraceTrack>& trace_tracks() { return trace_tracks_; }

 private:
  System() = default;
  std::shared_ptr<StatRegistry> stats_;
  ErrorSink errors_;
  std::unique_ptr<TransferNetwork> network_;
  std::unique_ptr<Interconnect> interconnect_;
  std::unique_ptr<SyncHub> hub_;
  std::vector<std::unique_ptr<TensorCore>> cores_;
  std::vector<int> ici_connections_;  // every core's collective unit, by core (shared by all)
  std::vector<TraceTrack> trace_tracks_;
};

}  // namespace tpusim::sim
