#include "sim/core/collective_unit.h"

#include <algorithm>

#include "isa/execute.h"
#include "isa/shared_fields.h"
#include "sim/chip/sync_hub.h"

namespace tpusim::sim {
namespace {

constexpr uint64_t kArrivalBit = 1;
uint64_t Tag(uint64_t instance, uint64_t step, bool arrival) {
  return (instance << 20) | (step << 1) | (arrival ? kArrivalBit : 0);
}

// Elements of chunk c when h elements are cut into n chunks: h/n each, the first h%n one more.
uint64_t ChunkElements(uint64_t h, int n, int c) {
  const uint64_t un = static_cast<uint64_t>(n);
  return h / un + (static_cast<uint64_t>(c) < h % un ? 1 : 0);
}

}  // namespace

CollectiveUnit::CollectiveUnit(std::string path, int core, const isa::Program& program,
                               const Interconnect* ic, TransferNetwork* network,
                               Cycles issue_cycles, ErrorSink* errors, int unit_id,
                               StatRegistry& stats)
    : path_(std::move(path)),
      core_(core),
      program_(program),
      ic_(ic),
      conn_(network->Connect(issue_cycles, TransferNetwork::TagKind::kCollective, core)),
      errors_(errors),
      unit_id_(unit_id) {
  commands_.set_receiver(this);
  go_.set_receiver(this);
  conn_.done->set_receiver(this);
  StatGroup& g = stats.AddGroup(path_);
  collectives_ = g.Add("collectives", StatUnit::kCount, "collective instructions completed");
  bytes_sent_ = g.Add("bytes_sent", StatUnit::kBytes, "bytes this core sent over ICI");
  busy_ = g.Add("busy_cycles", StatUnit::kCycles, "cycles from arrival to completion");
}

CollectiveUnit::Plan CollectiveUnit::MakePlan(const isa::Instruction& inst,
                                              const std::vector<int>& group) const {
  Plan p;
  p.kind = Plan::Kind::kOneStep;
  p.steps = 1;
  // The ring runs in the Interconnect's ring order (one hop per step where the torus allows); the
  // values do not depend on it (the SyncHub reduces in group order, isa/opcodes.def).
  std::vector<int> members = group;
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return ic_->RingPosition(a) < ic_->RingPosition(b); });
  const int n = static_cast<int>(members.size());
  const int rank =
      static_cast<int>(std::find(members.begin(), members.end(), core_) - members.begin());
  const isa::CollectiveOperands operands = isa::CollectiveOperandsOf(inst);
  const uint64_t count = operands.count;
  if (n <= 1) {
    p.steps = 0;
    return p;
  }
  p.eb = static_cast<uint64_t>(isa::DTypeBytes(operands.dtype));
  // The clockwise ring carries the first ceil(count/2) elements, the counter-clockwise one the
  // rest.
  const Ring snake{n,
                   rank,
                   (n - rank) % n,  // this core's rank on the reversed ring
                   members[(rank + 1) % n],
                   members[(rank + n - 1) % n],
                   (count + 1) / 2,
                   count / 2};
  switch (inst.opcode) {
    case isa::Opcode::kIciAllReduce:
      p.kind = Plan::Kind::kAllReduce;
      p.rings = AllReduceRings(snake, n);
      p.steps = 0;
      for (const Ring& r : p.rings) p.steps += 2 * (r.n - 1);
      break;
    case isa::Opcode::kIciAllGather:
    case isa::Opcode::kIciReduceScatter:
      p.kind = Plan::Kind::kGatherRing;
      p.rings = {snake};
      p.steps = n - 1;
      break;
    case isa::Opcode::kIciAllToAll:
      for (int m : members) {
        if (m != core_) p.one_step.push_back(Send{m, count * p.eb});
      }
      p.one_step_receives = n - 1;
      break;
    case isa::Opcode::kIciCollectivePermute: {
      uint64_t idx = inst.As<isa::op::IciCollectivePermute>().pairs;
      for (auto [s, t] : program_.permutations[idx].pairs) {
        if (s == t) continue;
        if (s == core_) p.one_step.push_back(Send{t, count * p.eb});
        if (t == core_) ++p.one_step_receives;
      }
      break;
    }
    default:
      TPUSIM_CHECK(false) << "CollectiveUnit: not a collective";
  }
  return p;
}

std::vector<CollectiveUnit::Ring> CollectiveUnit::AllReduceRings(const Ring& snake,
                                                                 int group_size) const {
  const std::vector<Interconnect::RingDimension>& dims = ic_->ring_dimensions();
  if (dims.empty() || group_size != ic_->chips() * ic_->cores_per_chip()) return {snake};
  // A ring's rank q holds the reduced chunk (q + 1) mod n after its reduce-scatter: the next
  // dimension's rings (whose members all share this coordinate) reduce that chunk.
  auto owned = [](uint64_t h, int n, int q) { return ChunkElements(h, n, (q + 1) % n); };
  std::vector<Ring> rings;
  uint64_t cw = snake.cw_count, ccw = snake.ccw_count;
  for (const Interconnect::RingDimension& d : dims) {
    Ring r;
    r.n = static_cast<int>(d.length);
    r.rank = static_cast<int>(ic_->RingCoordinate(core_, d));
    r.ccw_rank = (r.n - r.rank) % r.n;
    r.right = ic_->RingNeighbour(core_, d, 1);
    r.left = ic_->RingNeighbour(core_, d, -1);
    r.cw_count = cw;
    r.ccw_count = ccw;
    rings.push_back(r);
    cw = owned(cw, r.n, r.rank);
    ccw = owned(ccw, r.n, r.ccw_rank);
  }
  return rings;
}

void CollectiveUnit::Plan::SendsAt(int s, std::vector<Send>& out) const {
  out.clear();
  switch (kind) {
    case Kind::kAllReduce: {
      // Step s falls in one ring's reduce-scatter (rings in order) or all-gather (backwards).
      const int m = static_cast<int>(rings.size());
      bool gather = false;
      int k = 0;
      for (; k < m && s >= rings[static_cast<size_t>(k)].n - 1; ++k) {
        s -= rings[static_cast<size_t>(k)].n - 1;
      }
      if (k == m) {
        gather = true;
        for (k = m - 1; k > 0 && s >= rings[static_cast<size_t>(k)].n - 1; --k) {
          s -= rings[static_cast<size_t>(k)].n - 1;
        }
      }
      const Ring& r = rings[static_cast<size_t>(k)];
      // Chunk c of a half of h elements holds h/n elements, the first h%n chunks one more; at step
      // s a ring's rank q sends chunk (q - s) mod n (reduce-scatter), then (q + 1 - s) mod n.
      auto chunk = [&](uint64_t h, int q) {
        return ChunkElements(h, r.n, ((q + (gather ? 1 : 0) - s) % r.n + r.n) % r.n) * eb;
      };
      out.push_back(Send{r.right, chunk(r.cw_count, r.rank), false});
      out.push_back(Send{r.left, chunk(r.ccw_count, r.ccw_rank), true});
      return;
    }
    case Kind::kGatherRing:
      out.push_back(Send{rings[0].right, rings[0].cw_count * eb, false});
      out.push_back(Send{rings[0].left, rings[0].ccw_count * eb, true});
      return;
    case Kind::kOneStep:
      out = one_step;
      return;
    case Kind::kNone:
      return;
  }
}

void CollectiveUnit::Advance(Cycles now) {
  const isa::MemSpace space = isa::CollectiveOperandsOf(active_->inst).space;
  while (step_ < static_cast<size_t>(plan_.steps)) {
    if (!step_sent_) {
      plan_.SendsAt(static_cast<int>(step_), step_sends_);
      for (const Send& s : step_sends_) {
        TransferRequest req;
        req.tag = Tag(instance_, step_, false);
        req.bytes = Bytes(s.bytes);
        Route route = ic_->CoreToCore(core_, s.peer, s.ccw);
        req.uses = route.uses;
        req.latency = route.latency;
        if (space == isa::MemSpace::kHbm) {
          const int per = ic_->cores_per_chip();
          req.uses.push_back({ic_->hbm(core_ / per, core_ % per), UseKind::kRead});
          req.uses.push_back({ic_->hbm(s.peer / per, s.peer % per), UseKind::kWrite});
        }
        req.notify = (*peer_conns_)[static_cast<size_t>(s.peer)];
        req.notify_tag = Tag(instance_, step_, true);
        conn_.request->Send(now, std::move(req));
        bytes_sent_->Add(s.bytes);
        ++sends_pending_;
      }
      step_sent_ = true;
    }
    auto it = arrived_.find({instance_, step_});
    int got = it == arrived_.end() ? 0 : it->second;
    if (sends_pending_ > 0 || got < plan_.ReceivesAt()) return;
    if (it != arrived_.end()) arrived_.erase(it);
    ++step_;
    step_sent_ = false;
  }
  // All steps done.
  reports_->Send(now, Report{Report::Kind::kDone, active_->seq, now});
  collectives_->Add(1);
  busy_->Add((now - since_).value());
  active_.reset();
  running_ = false;
  plan_ = Plan{};  // a finished collective keeps nothing
}

void CollectiveUnit::Step(Cycles now) {
  while (conn_.done->HasReady(now)) {
    TransferDone d = conn_.done->Pop(now);
    if (d.tag & kArrivalBit) {
      ++arrived_[{d.tag >> 20, (d.tag >> 1) & ((uint64_t{1} << 19) - 1)}];
    } else {
      TPUSIM_CHECK(sends_pending_ > 0);
      --sends_pending_;
    }
  }
  while (go_.HasReady(now)) {
    SyncMessage go = go_.Pop(now);
    TPUSIM_CHECK(active_.has_value() && !running_);
    StatusOr<std::vector<int>> members = isa::RendezvousMembers(program_, active_->inst, core_);
    TPUSIM_CHECK(members.ok()) << "the hub released an invalid rendezvous";
    running_ = true;
    instance_ = go.instance;
    plan_ = MakePlan(active_->inst, *members);
    step_ = 0;
    step_sent_ = false;
    sends_pending_ = 0;
  }
  if (running_) Advance(now);
  if (!active_ && commands_.HasReady(now)) {
    Command cmd = commands_.Pop(now);
    reports_->Send(now, Report{Report::Kind::kStarted, cmd.seq, now});
    hub_->Send(now, SyncMessage{core_, 0, 0, cmd.inst});
    active_ = std::move(cmd);
    since_ = now;
  }
}

Cycles CollectiveUnit::NextWork(Cycles now) const {
  Cycles next = EarliestOf(conn_.done->NextArrival(), go_.NextArrival());
  if (!active_) next = EarliestOf(next, commands_.NextArrival());
  if (next <= now) next = now + Cycles(1);
  return next;
}

bool CollectiveUnit::SaveState(StateWriter& w) const {
  commands_.Save(w, [this](StateWriter& sw, const Command& c) {
    sw.Seq(core_, c.seq);
    sw.Value(static_cast<uint64_t>(c.pc));
  });
  go_.Save(w, [](StateWriter& sw, const SyncMessage& m) {
    sw.Value(static_cast<uint64_t>(m.core));
    sw.Instance(m.instance);
  });
  w.Value((active_.has_value() ? 1 : 0) | (running_ ? 2 : 0) | (step_sent_ ? 4 : 0));
  if (active_) {
    w.Seq(core_, active_->seq);
    w.Value(static_cast<uint64_t>(active_->pc));
    w.Time(since_);
  }
  if (running_) {  // the plan is a function of the active instruction and the core
    w.Instance(instance_);
    w.Value(step_);
    w.Value(static_cast<uint64_t>(sends_pending_));
  }
  w.Value(arrived_.size());
  for (const auto& [key, n] : arrived_) {
    w.Instance(key.first);
    w.Value(key.second);
    w.Value(static_cast<uint64_t>(n));
  }
  return true;
}

void CollectiveUnit::ShiftState(Cycles delta) {
  commands_.Shift(delta);
  go_.Shift(delta);
  since_ = ShiftTime(since_, delta);
}

}  // namespace tpusim::sim
