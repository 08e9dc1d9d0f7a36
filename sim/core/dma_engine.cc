#include "sim/core/dma_engine.h"

namespace tpusim::sim {

DmaEngine::DmaEngine(std::string path, int core, const Interconnect* ic, TransferNetwork* network,
                     Cycles issue_cycles, int local_copy_resource, std::vector<int> notify_conns,
                     DataPath* data, ErrorSink* errors, int unit_id, StatRegistry& stats)
    : path_(std::move(path)),
      core_(core),
      ic_(ic),
      conn_(network->Connect(issue_cycles)),
      local_copy_(local_copy_resource),
      notify_conns_(std::move(notify_conns)),
      data_(data),
      errors_(errors),
      unit_id_(unit_id) {
  StatGroup& g = stats.AddGroup(path_);
  transfers_ = g.Add("transfers", StatUnit::kCount, "descriptors completed");
  bytes_ = g.Add("bytes", StatUnit::kBytes, "bytes moved");
  busy_ = g.Add("busy_cycles", StatUnit::kCycles, "cycles with a descriptor in flight");
}

TransferRequest DmaEngine::MakeRequest(const Command& cmd) const {
  const isa::Instruction& inst = cmd.inst;
  auto d = [&](const char* name) { return inst.fields[isa::FieldIndex(inst.opcode, name)]; };
  TransferRequest req;
  req.tag = cmd.seq;
  req.bytes = Bytes(d("n0") * d("n1") * d("n2") * d("elem_bytes"));
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
    case isa::Opcode::kDmaHostToHbm:
      req.uses = {{ic_->host(chip), UseKind::kRead}, {hbm, UseKind::kWrite}};
      break;
    case isa::Opcode::kDmaHbmToHost:
      req.uses = {{hbm, UseKind::kRead}, {ic_->host(chip), UseKind::kWrite}};
      break;
    case isa::Opcode::kDmaVmemToRemote: {
      auto r = inst.As<isa::op::DmaVmemToRemote>();
      const int dst = static_cast<int>(r.dst_core);
      if (dst == core_ || dst >= static_cast<int>(notify_conns_.size())) {
        // A copy within the core (an out-of-range dst_core fails in the data path).
        req.uses = {{local_copy_, UseKind::kThrough}};
        req.latency = Cycles(1);
      } else {
        Route route = ic_->CoreToCore(core_, dst);
        req.uses = route.uses;
        req.latency = route.latency;
      }
      if (r.dst_space == isa::MemSpace::kHbm && dst < static_cast<int>(notify_conns_.size())) {
        req.uses.push_back({ic_->hbm(dst / per_chip, dst % per_chip), UseKind::kWrite});
      }
      if (dst != core_ && dst < static_cast<int>(notify_conns_.size())) {
        req.notify = notify_conns_[dst];
        req.notify_tag = r.dst_flag;
      }
      break;
    }
    default:
      TPUSIM_CHECK(false) << "DmaEngine: not a DMA";
  }
  return req;
}

void DmaEngine::Step(Cycles now) {
  while (conn_.done->HasReady(now)) {
    TransferDone done = conn_.done->Pop(now);
    TPUSIM_CHECK(active_.has_value() && active_->seq == done.tag);
    Status st = data_->Dma(core_, active_->inst);
    if (!st.ok()) errors_->Report(now, unit_id_, InstructionError(core_, *active_, st));
    reports_->Send(now, Report{Report::Kind::kDone, active_->seq, now});
    transfers_->Add(1);
    busy_->Add((now - active_since_).value());
    active_.reset();
  }
  if (!active_ && commands_.HasReady(now)) {
    Command cmd = commands_.Pop(now);
    reports_->Send(now, Report{Report::Kind::kStarted, cmd.seq, now});
    TransferRequest req = MakeRequest(cmd);
    bytes_->Add(req.bytes.value());
    conn_.request->Send(now, std::move(req));
    active_ = std::move(cmd);
    active_since_ = now;
  }
}

Cycles DmaEngine::NextWork(Cycles now) const {
  Cycles next = conn_.done->NextArrival();
  if (!active_) next = EarliestOf(next, commands_.NextArrival());
  if (next <= now) next = now + Cycles(1);
  return next;
}

}  // namespace tpusim::sim
