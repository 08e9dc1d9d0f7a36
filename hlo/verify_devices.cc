#include "hlo/verify_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/diagnostic.h"
#include "hlo/opcode.h"

namespace tpusim::hlo {
namespace {

class DeviceIdChecker {
 public:
  DeviceIdChecker(const HloModule& module, std::string_view source)
      : module_(module), source_(source), declared_(DeclaredDeviceCount(module)) {}

  Status Run() {
    for (const auto& comp : module_.computations()) {
      for (const auto& inst : comp->instructions()) {
        TPUSIM_RETURN_IF_ERROR(CheckReplicaGroups(*inst));
        TPUSIM_RETURN_IF_ERROR(CheckSourceTargetPairs(*inst));
        TPUSIM_RETURN_IF_ERROR(CheckChannel(*inst));
        if (inst->sharding()) TPUSIM_RETURN_IF_ERROR(CheckSharding(*inst, *inst->sharding()));
      }
    }
    return OkStatus();
  }

 private:
  Status Error(const HloInstruction& inst, std::string_view message) const {
    return LocatedError(
        module_.source_name(), source_, inst.location(),
        fmt::format("'%{}' ({}): {}", inst.name(), HloOpcodeString(inst.opcode()), message));
  }

  // "" if `id` names a device, else why not.
  std::string BadId(int64_t id) const {
    if (declared_ > 0 && (id < 0 || id >= declared_)) {
      return fmt::format("device {} is not in [0, {}) (replica_count={} x num_partitions={})", id,
                         declared_, std::max<int64_t>(1, module_.replica_count()),
                         std::max<int64_t>(1, module_.num_partitions()));
    }
    if (id < 0 || id >= kMaxDevices) {
      return fmt::format("device {} is not in [0, {}), the devices tpusim simulates", id,
                         kMaxDevices);
    }
    return "";
  }

  Status CheckReplicaGroups(const HloInstruction& inst) const {
    const ReplicaGroups& g = inst.replica_groups();
    std::set<int64_t> seen;
    for (const auto& group : g.groups) {
      if (group.empty()) {
        return Error(inst,
                     fmt::format("replica_groups={}: a replica group is empty", g.ToString()));
      }
      for (int64_t id : group) {
        const std::string bad = BadId(id);
        if (!bad.empty())
          return Error(inst, fmt::format("replica_groups={}: {}", g.ToString(), bad));
        if (!seen.insert(id).second) {
          return Error(inst, fmt::format("replica_groups={}: device {} appears more than once",
                                         g.ToString(), id));
        }
      }
    }
    return OkStatus();
  }

  Status CheckSourceTargetPairs(const HloInstruction& inst) const {
    std::set<int64_t> sources, targets;
    for (const auto& [s, t] : inst.source_target_pairs()) {
      for (int64_t id : {s, t}) {
        const std::string bad = BadId(id);
        if (!bad.empty()) {
          return Error(inst, fmt::format("source_target_pairs {{{},{}}}: {}", s, t, bad));
        }
      }
      if (!sources.insert(s).second) {
        return Error(inst, fmt::format("source_target_pairs: source {} appears more than once", s));
      }
      if (!targets.insert(t).second) {
        return Error(inst, fmt::format("source_target_pairs: target {} appears more than once", t));
      }
    }
    return OkStatus();
  }

  // XLA's VerifyChannels: a send/recv channel pairs sends and receives only (send, recv and
  // their -done ops share it); collectives may share a channel with collectives of any kind —
  // XLA asks for one opcode per channel only with HloVerifierOpts::verify_unique_channel_ids,
  // off by default and at every stage a dump is taken, and JAX's shard_map and pmap modules give
  // an all-reduce and an all-gather the same channel_id.
  Status CheckChannel(const HloInstruction& inst) {
    if (!inst.channel_id()) return OkStatus();
    const int64_t id = *inst.channel_id();
    if (id < 0) return Error(inst, fmt::format("channel_id={} is negative", id));
    auto send_recv = [](HloOpcode op) {
      return op == HloOpcode::kSend || op == HloOpcode::kSendDone || op == HloOpcode::kRecv ||
             op == HloOpcode::kRecvDone;
    };
    auto [it, inserted] = channels_.try_emplace(id, &inst);
    if (!inserted && send_recv(it->second->opcode()) != send_recv(inst.opcode())) {
      return Error(inst, fmt::format("channel_id={} is also used by '%{}' ({}) at line {}; XLA "
                                     "keeps a send/recv channel to sends and receives",
                                     id, it->second->name(), HloOpcodeString(it->second->opcode()),
                                     it->second->location().line));
    }
    return OkStatus();
  }

  Status CheckSharding(const HloInstruction& inst, const HloSharding& s) const {
    if (s.kind == HloSharding::Kind::kMaximal) {
      const std::string bad = BadId(s.device);
      if (!bad.empty()) return Error(inst, fmt::format("sharding={}: {}", s.ToString(), bad));
    }
    if (s.kind == HloSharding::Kind::kTiled) {
      for (int64_t d : s.tile_assignment_devices) {
        if (d < 0 || d >= kMaxDevices) {
          return Error(inst, fmt::format("sharding={}: device {} is not in [0, {})", s.ToString(),
                                         d, kMaxDevices));
        }
      }
    }
    for (const HloSharding& e : s.tuple_elements) TPUSIM_RETURN_IF_ERROR(CheckSharding(inst, e));
    return OkStatus();
  }

  const HloModule& module_;
  std::string_view source_;
  const int64_t declared_;
  std::map<int64_t, const HloInstruction*> channels_;
};

}  // namespace

int64_t DeclaredDeviceCount(const HloModule& module) {
  const int64_t r = std::max<int64_t>(1, module.replica_count());
  const int64_t p = std::max<int64_t>(1, module.num_partitions());
  // Both are at most kMaxDevices (the parser's range), so the product cannot overflow.
  return r * p > 1 ? r * p : 0;
}

Status VerifyDeviceIds(const HloModule& module, std::string_view source_text) {
  return DeviceIdChecker(module, source_text).Run();
}

}  // namespace tpusim::hlo

namespace tpusim::hlo {

Status LocateDeviceCountError(const HloModule& module, Status status) {
  if (status.ok()) return status;
  const HloInstruction* source = nullptr;
  int64_t largest = DeclaredDeviceCount(module) - 1;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      auto consider = [&](int64_t id) {
        if (id > largest) {
          largest = id;
          source = inst.get();
        }
      };
      for (const auto& group : inst->replica_groups().groups) {
        for (int64_t id : group) consider(id);
      }
      for (const auto& [s, t] : inst->source_target_pairs()) {
        consider(s);
        consider(t);
      }
    }
  }
  if (source == nullptr) return status;
  return Status(
      status.code(),
      FormatDiagnostic(module.source_name(), "", source->location(),
                       fmt::format("'%{}' ({}) names device {}: {}", source->name(),
                                   HloOpcodeString(source->opcode()), largest, status.message())));
}

StatusOr<int64_t> DevicesToRun(const HloModule& module, int64_t requested) {
  if (requested == 0) return InferDeviceCount(module);
  const int64_t partitions = std::max<int64_t>(1, module.num_partitions());
  if (requested < 0 || requested % partitions != 0) {
    return InvalidArgument(fmt::format(
        "{}: --replicas {}: the devices must be a positive multiple of the module's {} partitions "
        "(num_partitions; every replica runs all of them)",
        module.source_name(), requested, partitions));
  }
  return requested;
}

}  // namespace tpusim::hlo
