#include "compiler/lower/memory_space_assignment.h"

#include <algorithm>
#include <tuple>

#include "hlo/computation.h"
#include "hlo/module.h"
#include "isa/footprint.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

constexpr uint64_t kAlign = 64;

bool Overlaps(const HbmRange& a, uint64_t lo, uint64_t hi) {
  return a.address < hi && lo < a.address + static_cast<uint64_t>(a.bytes);
}

// Per instruction: [begin, end] of the outermost ctrl.loop containing it (itself if none), and the
// product of the counts of the loops containing it.
struct LoopSpans {
  std::vector<size_t> begin, end;
  std::vector<double> trips;
};

LoopSpans OutermostLoops(const std::vector<isa::Instruction>& code) {
  LoopSpans s;
  const size_t n = code.size();
  s.begin.resize(n);
  s.end.resize(n);
  s.trips.assign(n, 1.0);
  std::vector<double> counts{1.0};
  size_t outer = 0;
  for (size_t i = 0; i < n; ++i) {
    const isa::Opcode op = code[i].opcode;
    if (op == isa::Opcode::kCtrlLoop) {
      if (counts.size() == 1) outer = i;
      counts.push_back(counts.back() *
                       static_cast<double>(code[i].As<isa::op::CtrlLoop>().count));
    }
    const bool in_loop = counts.size() > 1;
    s.begin[i] = in_loop ? outer : i;
    s.end[i] = in_loop ? n - 1 : i;  // until its loop closes (below)
    s.trips[i] = counts.back();
    if (op == isa::Opcode::kCtrlEndLoop && counts.size() > 1) {
      counts.pop_back();
      if (counts.size() == 1) {  // the outermost loop closed: its instructions live until here
        std::fill(s.end.begin() + static_cast<std::ptrdiff_t>(outer),
                  s.end.begin() + static_cast<std::ptrdiff_t>(i) + 1, i);
      }
    }
  }
  return s;
}

struct Candidate {
  HbmRange hbm;
  size_t window_begin = 0, window_end = 0;  // instructions [begin, end) of its live kernels
  bool safe = true;
  bool seen = false;
  size_t first = 0, last = 0;
  double bytes_saved = 0;
  std::vector<size_t> accesses;
};

// Records every HBM access of the core's code on the candidates live at it (`cands` sorted by
// window_begin): a sweep over the code keeps the candidates whose window contains the instruction.
void ScanAccesses(const isa::Program& program, int core_id, const LoopSpans& loops,
                  std::vector<Candidate>& cands) {
  const auto& code = program.cores[static_cast<size_t>(core_id)].instructions;
  std::vector<Candidate*> live;
  size_t next = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    while (next < cands.size() && cands[next].window_begin <= i) live.push_back(&cands[next++]);
    std::erase_if(live, [&](const Candidate* c) { return c->window_end <= i; });
    if (live.empty()) continue;
    const isa::Instruction& inst = code[i];
    const isa::Footprint f = isa::InstructionFootprint(inst, core_id, program);
    auto visit = [&](const isa::Region& r, bool write) {
      if (r.space != isa::MemSpace::kHbm || r.core != core_id) return;
      const bool plain = (inst.opcode == isa::Opcode::kDmaHbmToVmem && !write) ||
                         (inst.opcode == isa::Opcode::kDmaVmemToHbm && write);
      for (Candidate* c : live) {
        if (!Overlaps(c->hbm, r.lo, r.hi)) continue;
        const bool inside =
            r.lo >= c->hbm.address && r.hi <= c->hbm.address + static_cast<uint64_t>(c->hbm.bytes);
        if (!plain || !inside || (!c->seen && !write)) {
          c->safe = false;  // not only whole plain DMAs, or read before it is written
          continue;
        }
        if (!c->seen) c->first = loops.begin[i];
        c->seen = true;
        c->last = std::max(c->last, loops.end[i]);
        c->bytes_saved += loops.trips[i] * static_cast<double>(isa::DmaHbmBytes(inst));
        c->accesses.push_back(i);
      }
    };
    for (const isa::Region& r : f.reads) visit(r, false);
    for (const isa::Region& r : f.writes) visit(r, true);
  }
}

// Lowest 64-byte aligned offset in [0, capacity) where `bytes` fit beside the kept buffers live at
// the same time; -1 if none.
int64_t FirstFit(const std::vector<KeptBuffer>& kept, size_t first, size_t last, int64_t bytes,
                 int64_t capacity) {
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  for (const KeptBuffer& k : kept) {
    if (k.first <= last && first <= k.last) {
      busy.emplace_back(k.vmem_address, k.vmem_address + static_cast<uint64_t>(k.hbm.bytes));
    }
  }
  std::sort(busy.begin(), busy.end());
  uint64_t at = 0;
  for (const auto& [lo, hi] : busy) {
    if (at + static_cast<uint64_t>(bytes) <= lo) break;
    at = std::max(at, (hi + kAlign - 1) / kAlign * kAlign);
  }
  return at + static_cast<uint64_t>(bytes) <= static_cast<uint64_t>(capacity)
             ? static_cast<int64_t>(at)
             : -1;
}

// The DMA at `inst` reading or writing kept buffer `k` (VMEM copy at `vmem_base + k.vmem_address`)
// as a dma.vmem_to_vmem.
isa::Instruction InVmem(const isa::Instruction& inst, const KeptBuffer& k, uint64_t vmem_base) {
  const isa::DmaDescriptor d = isa::DmaDescriptorOf(inst);
  isa::op::DmaVmemToVmem v{.flag = d.flag,
                           .src = d.src,
                           .dst = d.dst,
                           .elem_bytes = d.elem_bytes,
                           .n0 = d.n0,
                           .n1 = d.n1,
                           .n2 = d.n2,
                           .src_s1 = d.src_s1,
                           .src_s2 = d.src_s2,
                           .dst_s1 = d.dst_s1,
                           .dst_s2 = d.dst_s2};
  const uint64_t base = vmem_base + k.vmem_address;
  if (inst.opcode == isa::Opcode::kDmaHbmToVmem) {
    v.src = base + (d.src - k.hbm.address);
  } else {
    v.dst = base + (d.dst - k.hbm.address);
  }
  return v.ToInstruction();
}

}  // namespace

bool ValueSharedBeyondKernels(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
      return true;
    default:
      return hlo::IsCollective(inst.opcode());
  }
}

std::vector<HbmRange> VmemResidencyCandidates(const hlo::HloModule& module, const HbmPlan& plan) {
  const hlo::HloComputation* entry = module.entry_computation();
  std::vector<HbmRange> excluded, ranges;
  auto add = [&](const HloInstruction* v, std::vector<HbmRange>& to) {
    auto it = plan.values.find(v);
    if (it == plan.values.end()) return;
    for (const HbmBuffer& b : it->second) {
      if (b.fusion_internal || b.bytes() == 0) continue;
      to.push_back(HbmRange{b.address - b.view_offset,
                            b.bytes() + static_cast<int64_t>(b.view_offset), b.live_from,
                            b.live_to});
    }
  };
  for (const auto& up : entry->instructions()) {
    const HloInstruction* inst = up.get();
    if (ValueSharedBeyondKernels(*inst)) {
      add(inst, excluded);
      for (const HloInstruction* op : inst->operands()) add(op, excluded);
    } else if (inst == entry->root_instruction()) {
      add(inst, excluded);
    } else {
      add(inst, ranges);
    }
  }
  for (const isa::DataSegment& seg : plan.constants) {
    excluded.push_back(HbmRange{seg.address, static_cast<int64_t>(seg.bytes.size()), 0, 0});
  }
  // One entry per buffer: a view or alias names its owner's bytes and live range.
  std::sort(ranges.begin(), ranges.end(), [](const HbmRange& a, const HbmRange& b) {
    return std::tie(a.address, a.live_from, a.bytes) < std::tie(b.address, b.live_from, b.bytes);
  });
  std::vector<HbmRange> out;
  for (const HbmRange& r : ranges) {
    if (!out.empty() && out.back().address == r.address && out.back().live_from == r.live_from) {
      out.back().bytes = std::max(out.back().bytes, r.bytes);
      out.back().live_to = std::max(out.back().live_to, r.live_to);
      continue;
    }
    out.push_back(r);
  }
  std::erase_if(out, [&](const HbmRange& r) {
    return std::any_of(excluded.begin(), excluded.end(), [&](const HbmRange& x) {
      return Overlaps(x, r.address, r.address + static_cast<uint64_t>(r.bytes));
    });
  });
  return out;
}

std::vector<KeptBuffer> AssignVmemResidency(isa::Program& program, int core_id,
                                            const std::vector<HbmRange>& candidates,
                                            const std::vector<size_t>& kernel_starts,
                                            uint64_t vmem_base, int64_t vmem_bytes) {
  std::vector<KeptBuffer> kept;
  if (vmem_bytes <= 0 || candidates.empty() || kernel_starts.empty()) return kept;
  const auto start_of = [&](int64_t position) {
    const size_t p = static_cast<size_t>(std::clamp<int64_t>(
        position, 0, static_cast<int64_t>(kernel_starts.size()) - 1));
    return kernel_starts[p];
  };
  std::vector<Candidate> cands;
  for (const HbmRange& r : candidates) {
    if (r.bytes > vmem_bytes) continue;
    cands.push_back(Candidate{.hbm = r,
                              .window_begin = start_of(r.live_from),
                              .window_end = start_of(r.live_to + 1),
                              .accesses = {}});
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    return a.window_begin < b.window_begin;
  });
  auto& code = program.cores[static_cast<size_t>(core_id)].instructions;
  const LoopSpans loops = OutermostLoops(code);
  ScanAccesses(program, core_id, loops, cands);
  std::vector<Candidate*> order;
  for (Candidate& c : cands) {
    if (c.safe && c.seen) order.push_back(&c);
  }
  // Most HBM bytes saved per byte of VMEM first (ties: program order, deterministic).
  std::stable_sort(order.begin(), order.end(), [](const Candidate* a, const Candidate* b) {
    return a->bytes_saved / static_cast<double>(a->hbm.bytes) >
           b->bytes_saved / static_cast<double>(b->hbm.bytes);
  });
  std::vector<const Candidate*> placed;
  kept.reserve(order.size());
  for (const Candidate* c : order) {
    const int64_t at = FirstFit(kept, c->first, c->last, c->hbm.bytes, vmem_bytes);
    if (at < 0) continue;
    kept.push_back(KeptBuffer{c->hbm, static_cast<uint64_t>(at), c->first, c->last});
    placed.push_back(c);
  }
  for (size_t k = 0; k < kept.size(); ++k) {
    for (size_t i : placed[k]->accesses) code[i] = InVmem(code[i], kept[k], vmem_base);
  }
  std::sort(kept.begin(), kept.end(), [](const KeptBuffer& a, const KeptBuffer& b) {
    return std::tie(a.vmem_address, a.first) < std::tie(b.vmem_address, b.first);
  });
  return kept;
}

}  // namespace tpusim::compiler
