// TensorCore: the construction and wiring of one core's units — the sequencer, core.mxu.count MXUs,
// the VPU, the XLU, core.dma.engines DMA engines and the ICI collective unit — and, after a run,
// the per-core attribution (where each cycle went: sim_result.h StallCategory).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/chip_config.h"
#include "isa/machine_state.h"
#include "isa/program.h"
#include "sim/chip/interconnect.h"
#include "sim/chip/transfer_network.h"
#include "sim/core/collective_unit.h"
#include "sim/core/dma_engine.h"
#include "sim/core/mxu_unit.h"
#include "sim/core/sequencer.h"
#include "sim/core/stall_attribution.h"
#include "sim/core/vector_unit.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/stats.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

/// What a core needs from the system it is built into.
struct CoreContext {
  const config::ChipConfig* config = nullptr;
  const isa::Program* program = nullptr;
  MxuModelKind mxu_model = MxuModelKind::kFast;
  isa::MachineState* state = nullptr;  // null: timing-only (no values)
  ErrorSink* errors = nullptr;
  TransferNetwork* network = nullptr;
  const Interconnect* interconnect = nullptr;
  StatRegistry* stats = nullptr;
  // Per global core: its sequencer's network connection id (one list shared by every DMA engine,
  // so that no core holds a copy of a list as long as the system: N^2 memory).
  std::shared_ptr<const std::vector<int>> arrival_conns;
  std::vector<TransferNetwork::Connection> arrivals;  // per global core
  std::vector<int> local_copy;  // per global core: the VMEM-to-VMEM copy resource
  TraceSink* trace = nullptr;   // null: no trace
  std::vector<TraceTrack>* trace_tracks = nullptr;
  bool instruction_profile = false;  // SimOptions::instruction_profile
};

class TensorCore {
 public:
  /// `core` is the global core id; unit ids for error ordering start at `*next_unit_id`.
  static StatusOr<std::unique_ptr<TensorCore>> Create(int core, const CoreContext& ctx,
                                                      int* next_unit_id);

  /// Every unit of the core, in a fixed order.
  std::vector<Unit*> units();
  Sequencer& sequencer() { return *sequencer_; }
  CollectiveUnit& ici() { return *ici_; }
  std::vector<std::unique_ptr<MxuUnit>>& mxus() { return mxus_; }
  const std::string& path() const { return path_; }

  /// Attributes the retired cycles so far (StallAttribution::Flush): call between engine cycles,
  /// often enough to bound the buffered segments and MXU intervals.
  void FlushAttribution() { attribution_.Flush(); }
  StallAttribution& attribution() { return attribution_; }

  /// After the run: finishes the units' stats and returns the core's attribution.
  CoreResult Finish(Cycles end, const isa::Program& program);

 private:
  TensorCore() = default;
  int core_ = 0;
  std::string path_;
  const config::ChipConfig* config_ = nullptr;
  std::unique_ptr<Sequencer> sequencer_;
  std::vector<std::unique_ptr<MxuUnit>> mxus_;
  std::unique_ptr<VectorUnit> vpu_, xlu_;
  std::vector<std::unique_ptr<DmaEngine>> dmas_;
  std::unique_ptr<CollectiveUnit> ici_;
  StallAttribution attribution_;
};

}  // namespace tpusim::sim
