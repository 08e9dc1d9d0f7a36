#include "hlo/module.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.h"
#include "hlo/printer.h"
#include "hlo/shard_map.h"
#include "hlo/sharding.h"

namespace tpusim::hlo {

void HloModule::RemoveComputation(const HloComputation* c) {
  TPUSIM_CHECK(c != entry_) << "RemoveComputation of the entry";
  std::erase_if(computations_, [c](const std::unique_ptr<HloComputation>& p) { return p.get() == c; });
}

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  TPUSIM_CHECK(computation != nullptr);
  HloComputation* raw = computation.get();
  raw->set_parent(this);
  computations_.push_back(std::move(computation));
  return raw;
}

HloComputation* HloModule::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  // Iterative DFS (no recursion: call depth is bounded only by the input). The parser rejects
  // cyclic calls, so a computation is never re-entered while on the stack.
  std::vector<HloComputation*> order;
  std::set<const HloComputation*> done;
  struct Frame {
    HloComputation* comp;
    std::vector<HloComputation*> callees;
    size_t next;
  };
  auto callees_of = [](HloComputation* c) {
    std::vector<HloComputation*> out;
    for (const auto& inst : c->instructions()) {
      for (HloComputation* callee : inst->called_computations()) out.push_back(callee);
    }
    return out;
  };
  auto visit = [&](HloComputation* root) {
    if (done.count(root)) return;
    std::vector<Frame> stack;
    std::set<const HloComputation*> on_stack;
    stack.push_back({root, callees_of(root), 0});
    on_stack.insert(root);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.callees.size()) {
        HloComputation* c = f.callees[f.next++];
        if (done.count(c) || on_stack.count(c)) continue;
        stack.push_back({c, callees_of(c), 0});
        on_stack.insert(c);
        continue;
      }
      done.insert(f.comp);
      on_stack.erase(f.comp);
      order.push_back(f.comp);
      stack.pop_back();
    }
  };
  for (const auto& c : computations_) {
    if (c.get() != entry_) visit(c.get());
  }
  if (entry_ != nullptr) visit(entry_);
  return order;
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

std::string HloModule::ToString() const { return PrintModule(*this); }

int64_t InferDeviceCount(const HloModule& m) {
  // Saturating at kMaxDevices + 1 (which every consumer refuses): ids come from the input.
  constexpr int64_t kCap = kMaxDevices + 1;
  auto count = [](int64_t id) { return id < 0 ? 0 : id >= kCap ? kCap : id + 1; };
  int64_t n = std::min(kCap, std::max<int64_t>(1, m.replica_count())) *
              std::min(kCap, std::max<int64_t>(1, m.num_partitions()));
  n = std::min(n, kCap);
  for (const auto& comp : m.computations()) {
    for (const auto& inst : comp->instructions()) {
      const ReplicaGroups& g = inst->replica_groups();
      for (const auto& group : g.groups) {
        for (int64_t id : group) n = std::max(n, count(id));
      }
      if (g.iota_form) {
        int64_t prod = 1;
        for (int64_t d : g.iota.dims) prod = std::min(kCap, prod * std::clamp<int64_t>(d, 0, kCap));
        n = std::max(n, prod);
      }
      for (const auto& [s, t] : inst->source_target_pairs()) {
        n = std::max({n, count(s), count(t)});
      }
    }
  }
  return n;
}

namespace {

bool HasTiledSharding(const HloSharding& s) {
  if (s.kind == HloSharding::Kind::kTiled) return true;
  return std::any_of(s.tuple_elements.begin(), s.tuple_elements.end(), HasTiledSharding);
}

// The quoted names in `text` (`"x", "y"`).
std::set<std::string> QuotedNames(std::string_view text) {
  std::set<std::string> names;
  for (size_t q = text.find('"'); q != std::string_view::npos; q = text.find('"', q + 1)) {
    const size_t end = text.find('"', q + 1);
    if (end == std::string_view::npos) break;
    names.emplace(text.substr(q + 1, end - q - 1));
    q = end;
  }
  return names;
}

// The `#sdy.mesh<["x"=2, "y"=4]>` declarations in `text`.
std::vector<ShardyMesh> ShardyMeshes(std::string_view text) {
  constexpr int64_t kCap = kMaxDevices + 1;
  std::vector<ShardyMesh> meshes;
  constexpr std::string_view kOpen = "#sdy.mesh<[";
  for (size_t at = text.find(kOpen); at != std::string_view::npos; at = text.find(kOpen, at)) {
    at += kOpen.size();
    const size_t end = text.find(']', at);
    if (end == std::string_view::npos) break;
    ShardyMesh mesh;
    mesh.axes = QuotedNames(text.substr(at, end - at));
    for (size_t eq = text.find('=', at); eq < end; eq = text.find('=', eq + 1)) {
      int64_t axis = 0;
      size_t i = eq + 1;
      while (i < end && text[i] == ' ') ++i;
      for (; i < end && text[i] >= '0' && text[i] <= '9'; ++i) {
        axis = std::min(kCap, axis * 10 + (text[i] - '0'));
      }
      mesh.devices = std::min(kCap, mesh.devices * std::max<int64_t>(axis, 1));
    }
    meshes.push_back(std::move(mesh));
    at = end;
  }
  return meshes;
}

bool IsTarget(const HloInstruction& i, std::string_view target) {
  return i.opcode() == HloOpcode::kCustomCall && i.custom_call_target() == target;
}

std::string_view FrontendAttribute(const HloInstruction& i, std::string_view key) {
  for (const auto& [k, v] : i.frontend_attributes()) {
    if (k == key) return v;
  }
  return {};
}

}  // namespace

ShardyMesh LargestShardyMesh(const HloModule& m) {
  ShardyMesh best;
  for (const auto& [key, value] : m.other_attributes()) {
    if (key != "frontend_attributes") continue;
    for (ShardyMesh& mesh : ShardyMeshes(value)) {
      if (mesh.devices > best.devices) best = std::move(mesh);
    }
  }
  return best;
}

int64_t ShardyMeshPartitions(const HloModule& m) {
  if (m.replica_count() != 1 || m.num_partitions() != 1) return 1;
  const int64_t devices = LargestShardyMesh(m).devices;
  if (devices <= 1) return 1;
  for (const auto& comp : m.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->sharding() && HasTiledSharding(*inst->sharding())) return devices;
    }
  }
  return 1;
}

HloComputation* FullyManualShardMapBody(const HloModule& m) {
  if (m.replica_count() != 1 || m.num_partitions() != 1) return nullptr;
  const ShardyMesh mesh = LargestShardyMesh(m);
  if (mesh.devices <= 1) return nullptr;
  HloComputation* body = nullptr;
  for (const auto& up : m.entry_computation()->instructions()) {
    const HloInstruction& i = *up;
    switch (i.opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kTuple:
        continue;
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
      case HloOpcode::kCopy:
        // JAX re-annotates each result with a reshape to its own shape: an identity.
        if (i.shape().IsArray() && i.operand(0)->shape().IsArray() &&
            i.shape().dimensions() == i.operand(0)->shape().dimensions() &&
            i.shape().element_type() == i.operand(0)->shape().element_type()) {
          continue;
        }
        return nullptr;
      case HloOpcode::kCall:
        if (body != nullptr || i.to_apply() == nullptr ||
            !i.to_apply()->name().starts_with("xla.sdy.manual_computation_body")) {
          return nullptr;
        }
        body = i.to_apply();
        continue;
      default:
        break;
    }
    if (IsTarget(i, "xla.sdy.GlobalToLocalShape") || IsTarget(i, "xla.sdy.LocalToGlobalShape")) {
      if (QuotedNames(FrontendAttribute(i, "xla.sdy.manual_axes")) != mesh.axes) return nullptr;
      continue;
    }
    if (!IsTarget(i, "xla.sdy.FuncResultSharding") && !IsTarget(i, "Sharding")) return nullptr;
  }
  return body;
}

void ManualBodyCollectivesToReplicas(HloModule& m) {
  for (const auto& comp : m.computations()) {
    std::vector<HloInstruction*> partition_ids;
    for (const auto& up : comp->instructions()) {
      HloInstruction& i = *up;
      if (i.opcode() == HloOpcode::kPartitionId) partition_ids.push_back(&i);
      if (!i.channel_id() || i.use_global_device_ids()) continue;
      switch (i.opcode()) {
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
        case HloOpcode::kAllToAll:
        case HloOpcode::kRaggedAllToAll:
        case HloOpcode::kCollectiveBroadcast:
          i.set_channel_id(std::nullopt);
          break;
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kReduceScatter:
          i.set_channel_id(std::nullopt);
          i.mutable_replica_groups() = ReplicaGroups{};
          break;
        default:
          break;
      }
    }
    for (HloInstruction* p : partition_ids) {
      auto id = std::make_unique<HloInstruction>(HloOpcode::kReplicaId, p->shape(),
                                                 p->name() + ".replica-id");
      id->set_location(p->location());
      HloInstruction* replica = comp->AddInstructionBefore(std::move(id), p);
      const std::string name = p->name();
      p->ReplaceAllUsesWith(replica);
      comp->RemoveInstruction(p);
      replica->set_name(name);
    }
  }
}

std::optional<UnsupportedShardMap> FindUnsupportedShardMap(const HloModule& m) {
  if (FullyManualShardMapBody(m) != nullptr) return std::nullopt;
  const auto join = [](const std::set<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return "{" + out + "}";
  };
  const ShardyMesh mesh = LargestShardyMesh(m);
  for (const auto& comp : m.computations()) {
    for (const auto& up : comp->instructions()) {
      if (!IsTarget(*up, "xla.sdy.GlobalToLocalShape")) continue;
      const std::set<std::string> manual =
          QuotedNames(FrontendAttribute(*up, "xla.sdy.manual_axes"));
      const std::string what =
          manual == mesh.axes
              ? "a shard_map inside a larger SPMD program"
              : fmt::format("a shard_map manual over {} of the mesh's axes {}", join(manual),
                            join(mesh.axes));
      return UnsupportedShardMap{
          up.get(), what + " is not supported: tpusim runs a shard_map that is manual over every "
                           "mesh axis and is the whole entry computation (JAX's pmap), its body "
                           "as replicas; jit with in_shardings, or a shard_map over all axes, "
                           "runs"};
    }
  }
  return std::nullopt;
}

}  // namespace tpusim::hlo
