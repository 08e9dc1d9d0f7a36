// The rendezvous opcodes' semantics: sync.barrier and the ici.* collectives (opcodes.def). Which
// cores meet, what they must agree on, and the data each receives (collectives.h).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "isa/collectives.h"
#include "isa/execute.h"
#include "isa/footprint.h"
#include "isa/shared_fields.h"

namespace tpusim::isa {

StatusOr<std::vector<int>> RendezvousMembers(const Program& program, const Instruction& inst,
                                             int core) {
  std::vector<int> members;
  if (inst.opcode == Opcode::kIciCollectivePermute) {
    const uint64_t idx = inst.As<op::IciCollectivePermute>().pairs;
    if (idx >= program.permutations.size()) {
      return InvalidArgument(fmt::format("pairs={} is not in the permutation table", idx));
    }
    std::set<int> s;
    for (auto [a, b] : program.permutations[idx].pairs) s.insert({a, b});
    // XLA: a device named by no pair takes part in nothing and its output is zeros.
    if (!s.count(core)) s = {core};
    members.assign(s.begin(), s.end());
  } else {
    const std::optional<uint64_t> group = ReplicaGroupOf(inst);
    TPUSIM_CHECK(group.has_value()) << "RendezvousMembers: " << Mnemonic(inst.opcode);
    const uint64_t g = *group;
    if (g >= program.replica_groups.size()) {
      return InvalidArgument(fmt::format("group={} is not in the replica-group table", g));
    }
    for (const auto& grp : program.replica_groups[g].groups) {
      if (std::find(grp.begin(), grp.end(), core) != grp.end()) {
        members.assign(grp.begin(), grp.end());
        break;
      }
    }
  }
  if (std::find(members.begin(), members.end(), core) == members.end()) {
    return InvalidArgument("this core is not a member of the instruction's group/pairs");
  }
  for (int m : members) {
    if (m < 0 || m >= program.num_cores()) {
      return InvalidArgument(fmt::format("group member {} is not a core of this program", m));
    }
  }
  return members;
}

bool SameRendezvous(const Program& program, const std::vector<int>& members,
                    const std::vector<Instruction>& insts) {
  // The member set is a function of the table entry (replica group or permutation) and the core:
  // once rank 0's is `members`, a member naming the same entry of the same table has it too, so
  // only the others are looked up (a whole slice's rendezvous would otherwise build n lists of n).
  auto entry = [](const Instruction& i) -> std::pair<bool, uint64_t> {
    if (i.opcode == Opcode::kIciCollectivePermute) {
      return {true, i.As<op::IciCollectivePermute>().pairs};
    }
    const std::optional<uint64_t> g = ReplicaGroupOf(i);
    return {false, g.value_or(~uint64_t{0})};
  };
  for (size_t r = 0; r < members.size(); ++r) {
    if (r > 0 && entry(insts[r]) == entry(insts[0])) continue;
    StatusOr<std::vector<int>> own = RendezvousMembers(program, insts[r], members[r]);
    if (!own.ok() || *own != members) return false;  // an invalid one reports on its own core
  }
  return true;
}

Status CheckRendezvous(const std::vector<int>& members, const std::vector<Instruction>& insts,
                       int core, const Instruction& inst) {
  for (size_t r = 0; r < members.size(); ++r) {
    const int m = members[r];
    const Instruction& other = insts[r];
    std::string why;
    if (other.opcode != inst.opcode) {
      why = fmt::format("core {} is at {} instead", m, Mnemonic(other.opcode));
    } else {
      const auto& fields = Info(inst.opcode).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string_view f = fields[i].name;
        if (f == "src" || f == "dst") continue;
        if (other.fields[i] != inst.fields[i]) {
          why = fmt::format("core {} has {}={} but core {} has {}={}", m, f, other.fields[i], core,
                            f, inst.fields[i]);
          break;
        }
      }
    }
    if (!why.empty()) return InvalidArgument("collective mismatch across the group: " + why);
  }
  return OkStatus();
}

namespace {

// Rank pairs of ici.collective_permute's table entry among `members` (pairs among other cores,
// when a lone core is named by no pair, are not this rendezvous').
std::vector<std::pair<int, int>> PermuteRankPairs(const Program& program, const Instruction& inst,
                                                  const std::vector<int>& members) {
  std::vector<std::pair<int, int>> rank_pairs;
  const int n = static_cast<int>(members.size());
  auto rank = [&](int core) {
    return static_cast<int>(std::find(members.begin(), members.end(), core) - members.begin());
  };
  const uint64_t idx = inst.As<op::IciCollectivePermute>().pairs;
  for (auto [s, t] : program.permutations[idx].pairs) {
    if (rank(s) < n && rank(t) < n) rank_pairs.emplace_back(rank(s), rank(t));
  }
  return rank_pairs;
}

}  // namespace

namespace {

// One rendezvous of a collective: the group's cores in rank order, the memory space and each
// rank's source and destination addresses.
struct Rendezvous {
  MachineState& state;
  const std::vector<int>& members;
  const std::vector<Instruction>& insts;
  MemSpace space;

  // Rank r's source: `bytes` bytes into `out`.
  Status Read(size_t r, uint64_t bytes, std::string& out) const {
    out.resize(bytes);
    Status st = state.memory(space, members[r])
                    .Read(CollectiveOperandsOf(insts[r]).src, out.data(), out.size());
    if (!st.ok()) {
      return InvalidArgument(fmt::format("core {} source {}", members[r], st.message()));
    }
    return OkStatus();
  }
  // `bytes` to rank r's destination.
  Status Write(size_t r, const std::string& bytes) const {
    Status st = state.memory(space, members[r])
                    .Write(CollectiveOperandsOf(insts[r]).dst, bytes.data(), bytes.size());
    if (!st.ok()) {
      return InvalidArgument(fmt::format("core {} destination {}", members[r], st.message()));
    }
    return OkStatus();
  }
};

// all-reduce (`scatter` false: every rank receives the count-element reduction) or reduce-scatter
// (rank r receives chunk r of the n * count-element reduction). Every source is read before any
// destination is written.
Status ExecuteReduction(const Rendezvous& z, const CollectiveArgs& args, bool scatter) {
  const size_t n = z.members.size();
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(args.dtype));
  const uint64_t elements = scatter ? args.count * n : args.count;
  RankReduction reduction(args, elements);
  std::string buf;
  for (size_t r = 0; r < n; ++r) {
    TPUSIM_RETURN_IF_ERROR(z.Read(r, elements * eb, buf));
    reduction.Fold(buf);
  }
  if (!scatter) reduction.Store(0, args.count, buf);
  for (size_t r = 0; r < n; ++r) {
    if (scatter) reduction.Store(r * args.count, args.count, buf);
    TPUSIM_RETURN_IF_ERROR(z.Write(r, buf));
  }
  return OkStatus();
}

// all-gather, all-to-all and collective-permute: data moved, not combined.
Status ExecuteMovement(const Rendezvous& z, const Program& program, const CollectiveArgs& args) {
  const Instruction& inst = z.insts.front();
  const size_t n = z.members.size();
  const uint64_t bytes = args.count * static_cast<uint64_t>(DTypeBytes(args.dtype));
  std::string buf;
  if (inst.opcode == Opcode::kIciAllGather) {  // rank q's input at offset q * count, for all
    std::string all;
    for (size_t r = 0; r < n; ++r) {
      TPUSIM_RETURN_IF_ERROR(z.Read(r, bytes, buf));
      all += buf;
    }
    for (size_t r = 0; r < n; ++r) TPUSIM_RETURN_IF_ERROR(z.Write(r, all));
    return OkStatus();
  }
  const uint64_t in_bytes = inst.opcode == Opcode::kIciAllToAll ? bytes * n : bytes;
  std::vector<std::string> in(n);
  for (size_t r = 0; r < n; ++r) TPUSIM_RETURN_IF_ERROR(z.Read(r, in_bytes, in[r]));
  if (inst.opcode == Opcode::kIciAllToAll) {
    for (size_t r = 0; r < n; ++r) TPUSIM_RETURN_IF_ERROR(z.Write(r, AllToAllOutput(in, args, r)));
    return OkStatus();
  }
  TPUSIM_CHECK(inst.opcode == Opcode::kIciCollectivePermute)
      << "ExecuteCollective: not a collective: " << Mnemonic(inst.opcode);
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int> source,
                          PermuteSources(n, PermuteRankPairs(program, inst, z.members)));
  for (size_t t = 0; t < n; ++t) {
    const int s = source[t];
    if (s < 0) buf.assign(bytes, '\0');  // no target: zeros
    TPUSIM_RETURN_IF_ERROR(z.Write(t, s < 0 ? buf : in[static_cast<size_t>(s)]));
  }
  return OkStatus();
}

}  // namespace

Status ExecuteCollective(MachineState& state, const Program& program,
                         const std::vector<int>& members, const std::vector<Instruction>& insts) {
  // Ranks: group order for groups; for a permutation, `members` (sorted core ids).
  const Instruction& inst = insts.front();
  const CollectiveOperands c = CollectiveOperandsOf(inst);
  const MemSpace space = c.space;
  if (space != MemSpace::kHbm && space != MemSpace::kVmem) {
    return InvalidArgument("space must be hbm or vmem");
  }
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(c.dtype));
  const size_t n = members.size();
  const uint64_t in_elems = c.InputElements(n), out_elems = c.OutputElements(n);
  if (in_elems * eb > (uint64_t{1} << 40) || out_elems * eb > (uint64_t{1} << 40)) {
    return InvalidArgument("collective larger than 2^40 bytes");
  }
  const CollectiveArgs args{c.dtype, c.count, c.op};
  const Rendezvous z{state, members, insts, space};
  if (inst.opcode == Opcode::kIciAllReduce || inst.opcode == Opcode::kIciReduceScatter) {
    return ExecuteReduction(z, args, inst.opcode == Opcode::kIciReduceScatter);
  }
  return ExecuteMovement(z, program, args);
}

Footprint CollectiveFootprint(const Instruction& inst, int core, const Program& program) {
  const CollectiveOperands c = CollectiveOperandsOf(inst);
  // Members of the group (ici.collective_permute has none: its sides are `count` elements).
  const std::optional<uint64_t> group = ReplicaGroupOf(inst);
  const uint64_t n = group ? GroupMembers(program, *group, core).size() : 1;
  Footprint f;
  f.reads.push_back(RegionBytes(c.space, core, c.src, c.InputElements(n) * ElemBytes(c.dtype)));
  f.writes.push_back(RegionBytes(c.space, core, c.dst, c.OutputElements(n) * ElemBytes(c.dtype)));
  return f;
}

}  // namespace tpusim::isa
