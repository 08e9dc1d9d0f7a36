#include "sim/core/dma_engine.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "isa/execute.h"
#include "isa/footprint.h"
#include "isa/indirect_dma.h"

namespace tpusim::sim {

DmaEngine::DmaEngine(std::string path, int core, const Interconnect* ic, TransferNetwork* network,
                     Cycles issue_cycles, int local_copy_resource,
                     std::shared_ptr<const std::vector<int>> notify_conns,
                     isa::MachineState* state, ErrorSink* errors, int unit_id, StatRegistry& stats,
                     uint64_t vmem_bytes_per_cycle)
    : path_(std::move(path)),
      core_(core),
      ic_(ic),
      network_(network),
      conn_(network->Connect(issue_cycles, TransferNetwork::TagKind::kSeq, core)),
      local_copy_(local_copy_resource),
      notify_conns_(std::move(notify_conns)),
      state_(state),
      errors_(errors),
      unit_id_(unit_id),
      issue_cycles_(issue_cycles),
      vmem_bytes_per_cycle_(std::max<uint64_t>(vmem_bytes_per_cycle, 1)) {
  commands_.set_receiver(this);
  conn_.done->set_receiver(this);
  StatGroup& g = stats.AddGroup(path_);
  transfers_ = g.Add("transfers", StatUnit::kCount, "descriptors completed");
  bytes_ = g.Add("bytes", StatUnit::kBytes, "bytes moved");
  busy_ = g.Add("busy_cycles", StatUnit::kCycles, "cycles with a descriptor in flight");
}

Cycles DmaEngine::IndirectSetupCycles(uint64_t count, Cycles issue_cycles,
                                      uint64_t vmem_bytes_per_cycle) {
  const uint64_t bpc = std::max<uint64_t>(vmem_bytes_per_cycle, 1);
  const uint64_t index_read = (4 * count + bpc - 1) / bpc;
  const uint64_t extra_issues = count > 0 ? count - 1 : 0;
  return Cycles(index_read + extra_issues * issue_cycles.value());
}

TransferRequest DmaEngine::MakeRequest(const Command& cmd) const {
  const isa::Instruction& inst = cmd.inst;
  TransferRequest req;
  req.tag = cmd.seq;
  req.bytes = Bytes(isa::DmaHbmBytes(inst));  // whole tiles of a tiled HBM array
  const int per_chip = ic_->cores_per_chip();
  const int chip = core_ / per_chip, local = core_ % per_chip;
  const int hbm = ic_->hbm(chip, local);
  req.latency = ic_->hbm_latency();
  switch (inst.opcode) {
    case isa::Opcode::kDmaHbmToVmem:
      req.uses = {{hbm, UseKind::kRead}};
      break;
    case isa::Opcode::kDmaVmemToHbm:
      req.uses = {{hbm, UseKind::kWrite}};
      break;
    case isa::Opcode::kDmaVmemToVmem:  // through the core's VMEM copy path, as a copy to itself
      req.uses = {{local_copy_, UseKind::kThrough}};
      req.latency = Cycles(1);
      break;
    case isa::Opcode::kDmaHostToHbm:
      req.uses = {{ic_->host(chip), UseKind::kRead}, {hbm, UseKind::kWrite}};
      break;
    case isa::Opcode::kDmaHbmToHost:
      req.uses = {{hbm, UseKind::kRead}, {ic_->host(chip), UseKind::kWrite}};
      break;
    case isa::Opcode::kDmaGather:
    case isa::Opcode::kDmaScatter: {
      const isa::IndirectDma ind = isa::IndirectDma::From(inst);
      if (!ind.scatter) {
        req.uses = {{hbm, UseKind::kRead}};
      } else if (ind.combine) {
        req.uses = {{hbm, UseKind::kRead}, {hbm, UseKind::kWrite}};  // read-modify-write
      } else {
        req.uses = {{hbm, UseKind::kWrite}};
      }
      break;
    }
    case isa::Opcode::kDmaVmemToRemote: {
      auto r = inst.As<isa::op::DmaVmemToRemote>();
      const int dst = static_cast<int>(r.dst_core);
      if (dst == core_ || dst >= static_cast<int>(notify_conns_->size())) {
        // A copy within the core (an out-of-range dst_core fails in the data path).
        req.uses = {{local_copy_, UseKind::kThrough}};
        req.latency = Cycles(1);
      } else {
        Route route = ic_->CoreToCore(core_, dst);
        req.uses = route.uses;
        req.latency = route.latency;
      }
      if (r.dst_space == isa::MemSpace::kHbm && dst < static_cast<int>(notify_conns_->size())) {
        req.uses.push_back({ic_->hbm(dst / per_chip, dst % per_chip), UseKind::kWrite});
      }
      if (dst != core_ && dst < static_cast<int>(notify_conns_->size())) {
        req.notify = (*notify_conns_)[dst];
        req.notify_tag = r.dst_flag;
      }
      break;
    }
    default:
      TPUSIM_CHECK(false) << "DmaEngine: not a DMA";
  }
  return req;
}

void DmaEngine::SendPending(Cycles now) {
  conn_.request->Send(now, std::move(*pending_));
  pending_.reset();
}

void DmaEngine::Step(Cycles now) {
  while (conn_.done->HasReady(now)) {
    TransferDone done = conn_.done->Pop(now);
    TPUSIM_CHECK(active_.has_value() && active_->seq == done.tag);
    Status st = state_ != nullptr ? isa::DmaCopy(*state_, core_, active_->inst) : OkStatus();
    if (!st.ok()) errors_->Report(now, unit_id_, InstructionError(core_, *active_, st));
    reports_->Send(now, Report{Report::Kind::kDone, active_->seq, now});
    transfers_->Add(1);
    busy_->Add((now - active_since_).value());
    active_.reset();
  }
  if (pending_ && now >= pending_at_) SendPending(now);
  if (!active_ && commands_.HasReady(now)) {
    Command cmd = commands_.Pop(now);
    reports_->Send(now, Report{Report::Kind::kStarted, cmd.seq, now});
    TransferRequest req = MakeRequest(cmd);
    bytes_->Add(req.bytes.value());
    const bool indirect = isa::IsIndirectDma(cmd.inst.opcode);
    active_ = std::move(cmd);
    active_since_ = now;
    if (indirect) {
      const uint64_t count = isa::IndirectDma::From(active_->inst).count;
      pending_ = std::move(req);
      pending_at_ = now + IndirectSetupCycles(count, issue_cycles_, vmem_bytes_per_cycle_);
      if (pending_at_ <= now) SendPending(now);
    } else {
      conn_.request->Send(now, std::move(req));
    }
  }
}

Cycles DmaEngine::NextWork(Cycles now) const {
  Cycles next = conn_.done->NextArrival();
  if (!active_) next = EarliestOf(next, commands_.NextArrival());
  if (pending_) next = EarliestOf(next, pending_at_);
  if (next <= now) next = now + Cycles(1);
  return next;
}

bool DmaEngine::SaveState(StateWriter& w) const {
  commands_.Save(w, [this](StateWriter& sw, const Command& c) {
    sw.Seq(core_, c.seq);
    sw.Value(static_cast<uint64_t>(c.pc));
  });
  w.Value(active_.has_value() ? 1 : 0);
  if (active_) {
    w.Seq(core_, active_->seq);
    w.Value(static_cast<uint64_t>(active_->pc));
    w.Time(active_since_);
  }
  w.Value(pending_.has_value() ? 1 : 0);
  if (pending_) {
    network_->WriteRequest(w, static_cast<size_t>(conn_.id), *pending_);
    w.Time(pending_at_);
  }
  return true;
}

void DmaEngine::ShiftState(Cycles delta) {
  commands_.Shift(delta);
  active_since_ = ShiftTime(active_since_, delta);
  pending_at_ = ShiftTime(pending_at_, delta);
}

}  // namespace tpusim::sim
