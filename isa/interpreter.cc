#include "isa/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "isa/collectives.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/indirect_dma.h"

namespace tpusim::isa {

Interpreter::CoreState::CoreState(const MemorySizes& s, int id)
    : vmem(fmt::format("VMEM of core {}", id), static_cast<uint64_t>(s.vmem_bytes)),
      smem(fmt::format("SMEM of core {}", id), static_cast<uint64_t>(s.smem_bytes)),
      flags(kNumSyncFlags, 0),
      mxus(static_cast<size_t>(std::max<int64_t>(s.mxu_count, 0))) {}

Interpreter::Interpreter(const MemorySizes& sizes, InterpreterOptions options)
    : sizes_(sizes),
      options_(options),
      host_("host memory", static_cast<uint64_t>(sizes.host_bytes)) {}

int Interpreter::HbmIndex(int core) const {
  return sizes_.hbm_shared_by_cores ? core / static_cast<int>(sizes_.tensorcores_per_chip) : core;
}

SparseMemory& Interpreter::memory(MemSpace space, int core) {
  switch (space) {
    case MemSpace::kHbm:
      return hbm(core);
    case MemSpace::kVmem:
      return vmem(core);
    case MemSpace::kSmem:
      return smem(core);
    case MemSpace::kHost:
      return host_;
    case MemSpace::kAcc:
      break;
  }
  TPUSIM_CHECK(false) << "memory(): the accumulator space is not byte-addressed";
  return host_;
}

Status Interpreter::Load(const Program& program) {
  TPUSIM_RETURN_IF_ERROR(CheckProgramStructure(program));
  if (program.num_cores() > sizes_.cores) {
    return InvalidArgument(fmt::format("the program has {} cores but the system has only {}",
                                       program.num_cores(), sizes_.cores));
  }
  program_ = program;
  cores_.clear();
  hbm_.clear();
  executed_ = 0;
  int n = program.num_cores();
  cores_.reserve(n);
  for (int c = 0; c < n; ++c) cores_.emplace_back(sizes_, c);
  int n_hbm = n == 0 ? 0 : HbmIndex(n - 1) + 1;
  for (int h = 0; h < n_hbm; ++h) {
    std::string name = sizes_.hbm_shared_by_cores ? fmt::format("HBM of chip {}", h)
                                                  : fmt::format("HBM of core {}", h);
    hbm_.emplace_back(name, static_cast<uint64_t>(sizes_.hbm_bytes_per_core()));
  }
  host_ = SparseMemory("host memory", static_cast<uint64_t>(sizes_.host_bytes));
  // Loop matching (the assembler and the verifier check nesting; a decoded binary may not have
  // been).
  for (int c = 0; c < n; ++c) {
    const auto& insts = program.cores[c].instructions;
    auto& match = cores_[c].loop_match;
    match.assign(insts.size(), 0);
    std::vector<size_t> open;
    for (size_t i = 0; i < insts.size(); ++i) {
      if (insts[i].opcode == Opcode::kCtrlLoop) {
        open.push_back(i);
      } else if (insts[i].opcode == Opcode::kCtrlEndLoop) {
        if (open.empty()) return Error(c, i, "ctrl.endloop without a matching ctrl.loop");
        match[open.back()] = i;
        open.pop_back();
      }
    }
    if (!open.empty()) return Error(c, open.back(), "ctrl.loop without a matching ctrl.endloop");
  }
  for (size_t i = 0; i < program.data.size(); ++i) {
    const DataSegment& d = program.data[i];
    if (d.space == MemSpace::kAcc || (d.space != MemSpace::kHost && (d.core < 0 || d.core >= n))) {
      return InvalidArgument(
          fmt::format("data segment {}: no {} memory of core {}", i, Name(d.space), d.core));
    }
    Status st = memory(d.space, d.core).Write(d.address, d.bytes.data(), d.bytes.size());
    if (!st.ok()) return InvalidArgument(fmt::format("data segment {}: {}", i, st.message()));
  }
  return OkStatus();
}

Status Interpreter::Error(int core, size_t index, const std::string& message) const {
  std::string where = fmt::format("core {} instruction {}", core, index);
  const CoreProgram& cp = program_.cores[core];
  if (cp.source_line(index) != kNoSourceLine) {
    where +=
        fmt::format(" ({}:{})", program_.source_file.empty() ? "<source>" : program_.source_file,
                    cp.source_line(index));
  }
  if (index < cp.instructions.size()) {
    where += fmt::format(" {}", Mnemonic(cp.instructions[index].opcode));
  }
  return InvalidArgument(fmt::format("{}: {}", where, message));
}

Status Interpreter::Run() {
  const int n = program_.num_cores();
  while (true) {
    bool progress = false, all_halted = true;
    for (int c = 0; c < n; ++c) {
      while (true) {
        TPUSIM_ASSIGN_OR_RETURN(StepResult r, Step(c));
        if (r != StepResult::kProgress) break;
        progress = true;
      }
      all_halted &= cores_[c].halted;
    }
    if (all_halted) return OkStatus();
    if (!progress) {
      std::string msg = "deadlock: no core can make progress:";
      for (int c = 0; c < n; ++c) {
        if (cores_[c].halted) continue;
        const Instruction& inst = program_.cores[c].instructions[cores_[c].pc];
        msg += fmt::format("\n  core {} waits at instruction {}: {}", c, cores_[c].pc,
                           FormatInstruction(inst));
        if (inst.opcode == Opcode::kSyncWait) {
          msg += fmt::format(" (flag {} is {})", inst.As<op::SyncWait>().flag,
                             cores_[c].flags[inst.As<op::SyncWait>().flag]);
        }
      }
      return InvalidArgument(msg);
    }
  }
}

StatusOr<Interpreter::StepResult> Interpreter::Step(int c) {
  CoreState& cs = cores_[c];
  const auto& insts = program_.cores[c].instructions;
  if (cs.halted) return StepResult::kHalted;
  if (cs.pc >= insts.size()) {
    cs.halted = true;  // running off the end is an implicit halt
    return StepResult::kHalted;
  }
  const Instruction& inst = insts[cs.pc];
  switch (inst.opcode) {
    case Opcode::kSyncWait: {
      auto w = inst.As<op::SyncWait>();
      if (cs.flags[w.flag] < w.value) return StepResult::kBlocked;
      cs.flags[w.flag] -= static_cast<uint32_t>(w.value);
      break;
    }
    case Opcode::kSyncBarrier:
    case Opcode::kIciAllReduce:
    case Opcode::kIciAllGather:
    case Opcode::kIciReduceScatter:
    case Opcode::kIciAllToAll:
    case Opcode::kIciCollectivePermute: {
      if (!cs.arrived) {
        cs.arrived = true;
        TPUSIM_RETURN_IF_ERROR(CountInstruction(c));  // counted once, on arrival
      }
      TPUSIM_ASSIGN_OR_RETURN(bool done, TryRendezvous(c));
      // On completion every member's pc has advanced and `arrived` is cleared.
      return done ? StepResult::kProgress : StepResult::kBlocked;
    }
    case Opcode::kCtrlHalt:
      cs.halted = true;
      TPUSIM_RETURN_IF_ERROR(CountInstruction(c));
      return StepResult::kHalted;
    case Opcode::kCtrlLoop: {
      auto l = inst.As<op::CtrlLoop>();
      if (l.count == 0) {
        cs.pc = cs.loop_match[cs.pc];  // skip to the endloop; the ++pc below passes it
      } else {
        if (cs.loops.size() >= static_cast<size_t>(kMaxLoopDepth)) {
          return Error(c, cs.pc, fmt::format("loops nested deeper than {}", kMaxLoopDepth));
        }
        cs.loops.push_back({cs.pc + 1, l.count});
      }
      break;
    }
    case Opcode::kCtrlBreakUnless: {
      auto b = inst.As<op::CtrlBreakUnless>();
      if (cs.loops.empty()) return Error(c, cs.pc, "ctrl.break_unless outside a loop");
      if (b.space != MemSpace::kHbm && b.space != MemSpace::kVmem && b.space != MemSpace::kSmem) {
        return Error(c, cs.pc, fmt::format("space={} (hbm, vmem or smem)", Name(b.space)));
      }
      uint8_t pred = 0;
      if (Status st = memory(b.space, c).Read(b.addr, &pred, 1); !st.ok()) {
        return Error(c, cs.pc, "addr " + st.message());
      }
      if (pred == 0) {  // leave the loop: continue after its ctrl.endloop
        cs.pc = cs.loop_match[cs.loops.back().start - 1];
        cs.loops.pop_back();
      }
      break;
    }
    case Opcode::kCtrlEndLoop: {
      TPUSIM_CHECK(!cs.loops.empty()) << "loop matching was checked at Load";
      LoopFrame& f = cs.loops.back();
      if (--f.remaining > 0) {
        cs.pc = f.start;
        TPUSIM_RETURN_IF_ERROR(CountInstruction(c));
        return StepResult::kProgress;
      }
      cs.loops.pop_back();
      break;
    }
    default: {
      Status st = Execute(c, inst);
      if (!st.ok()) return Error(c, cs.pc, st.message());
    }
  }
  ++cs.pc;
  TPUSIM_RETURN_IF_ERROR(CountInstruction(c));
  return StepResult::kProgress;
}

Status Interpreter::CountInstruction(int c) {
  if (++executed_ > options_.max_instructions) {
    return ResourceExhausted(fmt::format(
        "instruction budget of {} exhausted (core {} at instruction {}); raise it or check for a "
        "runaway loop",
        options_.max_instructions, c, cores_[c].pc));
  }
  return OkStatus();
}

Status Interpreter::Execute(int c, const Instruction& inst) {
  CoreState& cs = cores_[c];
  switch (Info(inst.opcode).unit) {
    case Unit::kDma:
      return Dma(c, inst);
    case Unit::kMxu:
      if (inst.opcode == Opcode::kMxuLoadWeights) return LoadWeights(c, inst);
      if (inst.opcode == Opcode::kMxuMatmul) return Matmul(c, inst);
      return Pop(c, inst);
    case Unit::kVpu:
    case Unit::kXlu:
      return Vpu(c, inst);
    case Unit::kScalar:
      if (inst.opcode == Opcode::kSyncSignal) {
        auto s = inst.As<op::SyncSignal>();
        uint64_t v = uint64_t{cs.flags[s.flag]} + s.value;
        if (v > 0xFFFFFFFFull)
          return InvalidArgument(fmt::format("flag {} overflows 2^32-1", s.flag));
        cs.flags[s.flag] = static_cast<uint32_t>(v);
      }
      return OkStatus();  // nop
    case Unit::kIci:
      break;
  }
  TPUSIM_CHECK(false) << "unreachable: " << Mnemonic(inst.opcode);
  return OkStatus();
}

Status Interpreter::Dma(int c, const Instruction& inst) {
  // Every DMA opcode starts with the same descriptor fields (opcodes.def TPUSIM_DMA_DESCRIPTOR_).
  auto d = [&](const char* name) { return inst.fields[FieldIndex(inst.opcode, name)]; };
  uint64_t flag = d("flag"), src = d("src"), dst = d("dst"), eb = d("elem_bytes");
  uint64_t n0 = d("n0"), n1 = d("n1"), n2 = d("n2");
  uint64_t ss1 = d("src_s1"), ss2 = d("src_s2"), ds1 = d("dst_s1"), ds2 = d("dst_s2");
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8) {
    return InvalidArgument(fmt::format("elem_bytes={} (must be 1, 2, 4 or 8)", eb));
  }
  if (n0 == 0 || n1 == 0 || n2 == 0) return InvalidArgument("n0, n1 and n2 must be >= 1");
  if (IsIndirectDma(inst.opcode)) {
    TPUSIM_RETURN_IF_ERROR(ExecuteIndirectDma(inst, hbm(c), vmem(c)));
    uint32_t& v = cores_[c].flags[flag];
    if (v == 0xFFFFFFFFu) return InvalidArgument(fmt::format("flag {} overflows 2^32-1", flag));
    ++v;
    return OkStatus();
  }
  SparseMemory* from = nullptr;
  SparseMemory* to = nullptr;
  int dst_core = c;
  switch (inst.opcode) {
    case Opcode::kDmaHbmToVmem:
      from = &hbm(c), to = &vmem(c);
      break;
    case Opcode::kDmaVmemToHbm:
      from = &vmem(c), to = &hbm(c);
      break;
    case Opcode::kDmaHostToHbm:
      from = &host_, to = &hbm(c);
      break;
    case Opcode::kDmaHbmToHost:
      from = &hbm(c), to = &host_;
      break;
    case Opcode::kDmaVmemToRemote: {
      auto r = inst.As<op::DmaVmemToRemote>();
      if (r.dst_core >= static_cast<uint64_t>(program_.num_cores())) {
        return InvalidArgument(fmt::format("dst_core={} is not a core of this program ({} cores)",
                                           r.dst_core, program_.num_cores()));
      }
      if (r.dst_space != MemSpace::kVmem && r.dst_space != MemSpace::kHbm) {
        return InvalidArgument("dst_space must be vmem or hbm");
      }
      dst_core = static_cast<int>(r.dst_core);
      from = &vmem(c);
      to = &memory(r.dst_space, dst_core);
      break;
    }
    default:
      TPUSIM_CHECK(false) << "not a DMA";
  }
  // Gather everything first (the copy behaves as if buffered), then scatter.
  uint64_t run = n0 * eb;
  if (n0 > (uint64_t{1} << 40) / eb || n1 * n2 > (uint64_t{1} << 40) / run) {
    return InvalidArgument("transfer larger than 2^40 bytes");
  }
  std::string buf(run * n1 * n2, '\0');
  size_t off = 0;
  for (uint64_t i2 = 0; i2 < n2; ++i2) {
    for (uint64_t i1 = 0; i1 < n1; ++i1, off += run) {
      Status st = from->Read(src + i2 * ss2 + i1 * ss1, buf.data() + off, run);
      if (!st.ok()) return InvalidArgument("source " + st.message());
    }
  }
  off = 0;
  for (uint64_t i2 = 0; i2 < n2; ++i2) {
    for (uint64_t i1 = 0; i1 < n1; ++i1, off += run) {
      Status st = to->Write(dst + i2 * ds2 + i1 * ds1, buf.data() + off, run);
      if (!st.ok()) return InvalidArgument("destination " + st.message());
    }
  }
  auto bump = [&](int core, uint64_t f) -> Status {
    uint32_t& v = cores_[core].flags[f];
    if (v == 0xFFFFFFFFu) return InvalidArgument(fmt::format("flag {} overflows 2^32-1", f));
    ++v;
    return OkStatus();
  };
  TPUSIM_RETURN_IF_ERROR(bump(c, flag));
  if (inst.opcode == Opcode::kDmaVmemToRemote) {
    TPUSIM_RETURN_IF_ERROR(bump(dst_core, inst.As<op::DmaVmemToRemote>().dst_flag));
  }
  return OkStatus();
}

StatusOr<bool> Interpreter::TryRendezvous(int c) {
  const Instruction& inst = program_.cores[c].instructions[cores_[c].pc];
  const int n = program_.num_cores();
  std::vector<int> members;
  if (inst.opcode == Opcode::kIciCollectivePermute) {
    uint64_t idx = inst.As<op::IciCollectivePermute>().pairs;
    if (idx >= program_.permutations.size()) {
      return Error(c, cores_[c].pc, fmt::format("pairs={} is not in the permutation table", idx));
    }
    std::set<int> s;
    for (auto [a, b] : program_.permutations[idx].pairs) s.insert({a, b});
    // XLA: a device named by no pair takes part in nothing and its output is zeros.
    if (!s.count(c)) s = {c};
    members.assign(s.begin(), s.end());
  } else {
    uint64_t g = inst.fields[FieldIndex(inst.opcode, "group")];
    if (g >= program_.replica_groups.size()) {
      return Error(c, cores_[c].pc, fmt::format("group={} is not in the replica-group table", g));
    }
    for (const auto& grp : program_.replica_groups[g].groups) {
      if (std::find(grp.begin(), grp.end(), c) != grp.end()) members = grp;
    }
  }
  if (std::find(members.begin(), members.end(), c) == members.end()) {
    return Error(c, cores_[c].pc, "this core is not a member of the instruction's group/pairs");
  }
  for (int m : members) {
    if (m < 0 || m >= n) {
      return Error(c, cores_[c].pc,
                   fmt::format("group member {} is not a core of this program", m));
    }
    if (!cores_[m].arrived) return false;
  }
  // Everyone is here: the instructions must agree on everything but their addresses.
  for (int m : members) {
    const Instruction& other = program_.cores[m].instructions[cores_[m].pc];
    std::string why;
    if (other.opcode != inst.opcode) {
      why = fmt::format("core {} is at {} instead", m, Mnemonic(other.opcode));
    } else {
      const auto& fields = Info(inst.opcode).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string_view f = fields[i].name;
        if (f == "src" || f == "dst") continue;
        if (other.fields[i] != inst.fields[i]) {
          why = fmt::format("core {} has {}={} but core {} has {}={}", m, f, other.fields[i], c, f,
                            inst.fields[i]);
          break;
        }
      }
    }
    if (!why.empty()) return Error(c, cores_[c].pc, "collective mismatch across the group: " + why);
  }
  if (inst.opcode != Opcode::kSyncBarrier) {
    Status st = Collective(members, inst);
    if (!st.ok()) return Error(c, cores_[c].pc, st.message());
  }
  for (int m : members) {
    cores_[m].arrived = false;
    ++cores_[m].pc;
  }
  return true;
}

Status Interpreter::Collective(const std::vector<int>& members, const Instruction& inst) {
  // Ranks: group order for groups; for a permutation, `members` (sorted core ids).
  auto space = static_cast<MemSpace>(inst.fields[FieldIndex(inst.opcode, "space")]);
  if (space != MemSpace::kHbm && space != MemSpace::kVmem) {
    return InvalidArgument("space must be hbm or vmem");
  }
  auto dtype = static_cast<DType>(inst.fields[FieldIndex(inst.opcode, "dtype")]);
  uint64_t count = inst.fields[FieldIndex(inst.opcode, "count")];
  uint64_t eb = static_cast<uint64_t>(DTypeBytes(dtype));
  size_t n = members.size();
  uint64_t in_elems = count, out_elems = count;
  switch (inst.opcode) {
    case Opcode::kIciAllGather:
      out_elems = count * n;
      break;
    case Opcode::kIciReduceScatter:
    case Opcode::kIciAllToAll:
      in_elems = count * n;
      out_elems = count * n;
      if (inst.opcode == Opcode::kIciReduceScatter) out_elems = count;
      break;
    default:
      break;
  }
  if (in_elems * eb > (uint64_t{1} << 40) || out_elems * eb > (uint64_t{1} << 40)) {
    return InvalidArgument("collective larger than 2^40 bytes");
  }
  std::vector<std::string> in(n), out(n);
  for (size_t r = 0; r < n; ++r) {
    int m = members[r];
    const Instruction& mi = program_.cores[m].instructions[cores_[m].pc];
    in[r].resize(in_elems * eb);
    Status st =
        memory(space, m).Read(mi.fields[FieldIndex(mi.opcode, "src")], in[r].data(), in[r].size());
    if (!st.ok()) return InvalidArgument(fmt::format("core {} source {}", m, st.message()));
  }
  CollectiveArgs args{dtype, count, ReduceOp::kSum};
  if (int f = FieldIndex(inst.opcode, "op"); f >= 0)
    args.op = static_cast<ReduceOp>(inst.fields[f]);
  switch (inst.opcode) {
    case Opcode::kIciAllReduce:
      out = AllReduce(in, args);
      break;
    case Opcode::kIciAllGather:
      out = AllGather(in, args);
      break;
    case Opcode::kIciReduceScatter:
      out = ReduceScatter(in, args);
      break;
    case Opcode::kIciAllToAll:
      out = AllToAll(in, args);
      break;
    case Opcode::kIciCollectivePermute: {
      std::vector<std::pair<int, int>> rank_pairs;
      uint64_t idx = inst.As<op::IciCollectivePermute>().pairs;
      for (auto [s, t] : program_.permutations[idx].pairs) {
        auto rank = [&](int core) {
          return static_cast<int>(std::find(members.begin(), members.end(), core) -
                                  members.begin());
        };
        // Pairs among other cores (a lone core named by no pair) are not this rendezvous'.
        if (rank(s) < static_cast<int>(n) && rank(t) < static_cast<int>(n)) {
          rank_pairs.emplace_back(rank(s), rank(t));
        }
      }
      auto r = CollectivePermute(in, args, rank_pairs);
      if (!r.ok()) return r.status();
      out = std::move(r).value();
      break;
    }
    default:
      TPUSIM_CHECK(false) << "not a collective";
  }
  for (size_t r = 0; r < n; ++r) {
    int m = members[r];
    const Instruction& mi = program_.cores[m].instructions[cores_[m].pc];
    Status st = memory(space, m).Write(mi.fields[FieldIndex(mi.opcode, "dst")], out[r].data(),
                                       out[r].size());
    if (!st.ok()) return InvalidArgument(fmt::format("core {} destination {}", m, st.message()));
  }
  return OkStatus();
}

}  // namespace tpusim::isa
