#include "sim/core/tensor_core.h"

#include <algorithm>

#include "isa/footprint.h"
#include "isa/indirect_dma.h"
#include "isa/vpu_cost.h"

namespace tpusim::sim {
namespace {

// FLOP and bytes one execution of `inst` accounts for (report per instruction / per HLO op).
std::pair<uint64_t, uint64_t> Work(const isa::Instruction& inst, const config::ChipConfig& config,
                                   int core, const isa::Program& program) {
  switch (isa::Info(inst.opcode).unit) {
    case isa::Unit::kMxu:
      if (inst.opcode == isa::Opcode::kMxuMatmul) {
        auto o = inst.As<isa::op::MxuMatmul>();
        return {2 * o.m * o.k * o.n, o.m * o.k * static_cast<uint64_t>(isa::DTypeBytes(o.dtype))};
      }
      if (inst.opcode == isa::Opcode::kMxuLoadWeights) {
        auto o = inst.As<isa::op::MxuLoadWeights>();
        return {0, o.k * o.n * static_cast<uint64_t>(isa::DTypeBytes(o.dtype))};
      } else {
        auto o = inst.As<isa::op::MxuPop>();
        return {0, o.m * o.n * static_cast<uint64_t>(isa::DTypeBytes(o.dtype))};
      }
    case isa::Unit::kVpu:
    case isa::Unit::kXlu: {
      isa::VectorCost c =
          isa::VectorInstructionCost(inst, config.core.vpu, config.core.vmem_bytes_per_cycle);
      return {c.flop, (c.vmem_bytes_read + c.vmem_bytes_written).value()};
    }
    case isa::Unit::kDma: {
      return {0, isa::DmaHbmBytes(inst)};
    }
    case isa::Unit::kIci: {
      isa::Footprint fp = isa::InstructionFootprint(inst, core, program);
      uint64_t b = 0;
      for (const isa::Region& r : fp.reads) b += r.hi - r.lo;
      return {0, b};
    }
    case isa::Unit::kScalar:
      break;
  }
  return {0, 0};
}

}  // namespace

StatusOr<std::unique_ptr<TensorCore>> TensorCore::Create(int core, const CoreContext& ctx,
                                                         int* next_unit_id) {
  const config::ChipConfig& config = *ctx.config;
  std::unique_ptr<TensorCore> tc(new TensorCore());
  tc->core_ = core;
  tc->config_ = ctx.config;
  const int per_chip = static_cast<int>(config.tensorcores);
  tc->path_ = "chip" + std::to_string(core / per_chip) + ".core" + std::to_string(core % per_chip);
  StatRegistry& stats = *ctx.stats;

  UnitTargets targets;
  for (int m = 0; m < config.core.mxu.count; ++m) {
    TPUSIM_ASSIGN_OR_RETURN(
        std::unique_ptr<MxuUnit> mxu,
        MxuUnit::Create(tc->path_ + ".mxu" + std::to_string(m), core, m, config, ctx.mxu_model,
                        ctx.state, ctx.errors, (*next_unit_id)++, stats));
    targets.mxu.push_back(&mxu->commands());
    tc->mxus_.push_back(std::move(mxu));
  }
  tc->vpu_ = std::make_unique<VectorUnit>(tc->path_ + ".vpu", core, config, ctx.state, ctx.errors,
                                          (*next_unit_id)++, stats);
  tc->xlu_ = std::make_unique<VectorUnit>(tc->path_ + ".xlu", core, config, ctx.state, ctx.errors,
                                          (*next_unit_id)++, stats);
  targets.vpu = &tc->vpu_->commands();
  targets.xlu = &tc->xlu_->commands();
  // The config is valid (Simulator::Run): at least one engine, issue >= 1 cycle, port >= 1 B/cycle.
  const Cycles issue(static_cast<uint64_t>(config.core.dma_issue_cycles));
  for (int d = 0; d < config.core.dma_engines; ++d) {
    tc->dmas_.push_back(std::make_unique<DmaEngine>(
        tc->path_ + ".dma" + std::to_string(d), core, ctx.interconnect, ctx.network, issue,
        ctx.local_copy[core], ctx.arrival_conns, ctx.state, ctx.errors, (*next_unit_id)++, stats,
        static_cast<uint64_t>(config.core.vmem_bytes_per_cycle)));
    targets.dma.push_back(&tc->dmas_.back()->commands());
  }
  tc->ici_ =
      std::make_unique<CollectiveUnit>(tc->path_ + ".ici", core, *ctx.program, ctx.interconnect,
                                       ctx.network, issue, ctx.errors, (*next_unit_id)++, stats);
  targets.ici = &tc->ici_->commands();
  targets.queue_depth = config.core.unit_queue_depth;

  // Trace tracks: one per target in the sequencer's order, then the sequencer itself.
  std::vector<int> tracks;
  if (ctx.trace != nullptr) {
    std::vector<std::string> names;
    for (int m = 0; m < config.core.mxu.count; ++m) names.push_back("mxu" + std::to_string(m));
    names.push_back("vpu");
    names.push_back("xlu");
    for (size_t d = 0; d < tc->dmas_.size(); ++d) names.push_back("dma" + std::to_string(d));
    names.push_back("ici");
    names.push_back("sequencer");
    for (size_t i = 0; i < names.size(); ++i) {
      tracks.push_back(static_cast<int>(ctx.trace_tracks->size()));
      ctx.trace_tracks->push_back(TraceTrack{core, static_cast<int>(i), tc->path_, names[i]});
    }
  } else {
    tracks.assign(targets.mxu.size() + targets.dma.size() + 4, 0);
  }
  tc->sequencer_ = std::make_unique<Sequencer>(tc->path_ + ".sequencer", core, *ctx.program,
                                               targets, ctx.arrivals[core], ctx.errors,
                                               (*next_unit_id)++, stats, ctx.trace, tracks,
                                               ctx.instruction_profile);
  Sequencer& seq = *tc->sequencer_;
  if (ctx.state != nullptr) seq.set_values(ctx.state);
  int i = 0;
  seq.set_attribution(&tc->attribution_);
  for (auto& m : tc->mxus_) {
    m->set_attribution(&tc->attribution_);
    m->set_reports(&seq.reports(i++));
  }
  tc->vpu_->set_reports(&seq.reports(i++));
  tc->xlu_->set_reports(&seq.reports(i++));
  for (auto& d : tc->dmas_) d->set_reports(&seq.reports(i++));
  tc->ici_->set_reports(&seq.reports(i++));
  return tc;
}

std::vector<Unit*> TensorCore::units() {
  std::vector<Unit*> u{sequencer_.get()};
  for (auto& m : mxus_) u.push_back(m.get());
  u.push_back(vpu_.get());
  u.push_back(xlu_.get());
  for (auto& d : dmas_) u.push_back(d.get());
  u.push_back(ici_.get());
  return u;
}

CoreResult TensorCore::Finish(Cycles end, const isa::Program& program) {
  sequencer_->Finish(end);
  CoreResult r;
  r.core = core_;
  r.path = path_;
  r.cycles = sequencer_->end();
  Sequencer::Profile profile = sequencer_->TakeProfile();
  r.ops = std::move(profile.ops);
  r.instructions = std::move(profile.details);
  const isa::CoreProgram& code = program.cores[core_];
  const size_t untagged = r.ops.size() - 1;
  for (size_t pc = 0; pc < profile.executions.size(); ++pc) {
    const uint64_t n = profile.executions[pc];
    if (n == 0) continue;
    const isa::Instruction& inst = code.instructions[pc];
    auto [flop, bytes] = Work(inst, *config_, core_, program);
    const int32_t tag = code.hlo_tag(pc);
    OpProfile& o = r.ops[tag >= 0 && static_cast<size_t>(tag) < untagged ? static_cast<size_t>(tag)
                                                                          : untagged];
    o.executions += n;
    o.flop += flop * n;
    o.bytes += bytes * n;
    if (inst.opcode == isa::Opcode::kDmaHbmToVmem || inst.opcode == isa::Opcode::kDmaVmemToHbm ||
        inst.opcode == isa::Opcode::kDmaGather || inst.opcode == isa::Opcode::kDmaScatter) {
      o.hbm_bytes += bytes * n;
    }
    if (!r.instructions.empty()) {
      r.instructions[pc].flop = flop * n;
      r.instructions[pc].bytes = bytes * n;
    }
    (inst.opcode == isa::Opcode::kMxuMatmul ? r.mxu_flop : r.vpu_flop) += flop * n;
  }
  for (auto& m : mxus_) {
    m->Finish();
    r.useful_macs += m->useful_macs();
  }
  attribution_.Flush();
  r.stalls = attribution_.totals();
  return r;
}

}  // namespace tpusim::sim
