#include "sim/chip/system.h"

#include <algorithm>
#include <memory>
#include <string>

namespace tpusim::sim {

StatusOr<std::unique_ptr<System>> System::Create(const config::ChipConfig& config,
                                                 const isa::Program& program,
                                                 isa::MachineState* state, const Options& options) {
  std::unique_ptr<System> s(new System());
  s->stats_ = std::make_shared<StatRegistry>();
  s->network_ = std::make_unique<TransferNetwork>("network", *s->stats_);
  s->interconnect_ = std::make_unique<Interconnect>(Interconnect::Build(config, *s->network_));
  const int n = program.num_cores();
  int unit_id = 0;
  s->hub_ = std::make_unique<SyncHub>(n, program, state, &s->errors_, unit_id++);

  CoreContext ctx;
  ctx.config = &config;
  ctx.program = &program;
  ctx.mxu_model = options.mxu_model;
  ctx.state = state;
  ctx.errors = &s->errors_;
  ctx.network = s->network_.get();
  ctx.interconnect = s->interconnect_.get();
  ctx.stats = s->stats_.get();
  ctx.trace = options.trace;
  ctx.instruction_profile = options.instruction_profile;
  ctx.trace_tracks = &s->trace_tracks_;
  s->network_->set_trace(options.trace);
  const double vmem_bpc = static_cast<double>(config.core.vmem_bytes_per_cycle);
  const int per_chip = static_cast<int>(config.tensorcores);
  auto arrival_conns = std::make_shared<std::vector<int>>();
  for (int c = 0; c < n; ++c) {
    TransferNetwork::Connection conn = s->network_->Connect(Cycles(1));
    ctx.arrivals.push_back(conn);
    arrival_conns->push_back(conn.id);
    ctx.local_copy.push_back(s->network_->AddResource("chip" + std::to_string(c / per_chip) +
                                                          ".core" + std::to_string(c % per_chip) +
                                                          ".vmem_copy",
                                                      vmem_bpc));
  }
  ctx.arrival_conns = std::move(arrival_conns);
  for (int c = 0; c < n; ++c) {
    TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<TensorCore> core, TensorCore::Create(c, ctx, &unit_id));
    s->cores_.push_back(std::move(core));
  }
  for (auto& core : s->cores_) s->ici_connections_.push_back(core->ici().connection_id());
  for (int c = 0; c < n; ++c) {
    TensorCore& core = *s->cores_[c];
    core.ici().set_peers(&s->ici_connections_);
    core.ici().set_hub(&s->hub_->collective_in(c));
    core.sequencer().set_hub(&s->hub_->barrier_in(c));
    s->hub_->set_outputs(c, &core.sequencer().barrier_release(), &core.ici().go());
  }
  return s;
}

std::vector<Unit*> System::units() {
  std::vector<Unit*> all;
  for (auto& core : cores_) {
    for (Unit* u : core->units()) all.push_back(u);
  }
  all.push_back(network_.get());
  all.push_back(hub_.get());
  return all;
}

void System::AddTo(Engine& engine) {
  engine.set_error_sink(&errors_);
  for (Unit* u : units()) engine.AddUnit(u);
}

}  // namespace tpusim::sim
