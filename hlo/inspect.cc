#include "hlo/inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

InspectSummary::ValueInfo Value(std::string name, const Shape& shape,
                                const std::optional<HloSharding>& sharding) {
  return {std::move(name), shape.ToString(), shape.ByteSize(),
          sharding.has_value() ? sharding->ToString() : std::string()};
}

Json IntList(const std::vector<int64_t>& v) {
  Json a = Json::MakeArray();
  for (int64_t x : v) a.push_back(x);
  return a;
}

std::string HumanCount(double v) {
  const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
  int u = 0;
  while (v >= 1000 && u < 6) {
    v /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{}", v) : fmt::format("{:.3g}{}", v, units[u]);
}

}  // namespace

InspectSummary SummarizeModule(const HloModule& module) {
  InspectSummary s;
  s.module_name = module.name();
  s.replica_count = module.replica_count();
  s.num_partitions = module.num_partitions();
  s.devices = InferDeviceCount(module);
  std::map<std::string, int64_t> opcode_counts;
  std::map<std::string, int64_t> targets;
  for (const auto& comp : module.computations()) {
    s.computations.push_back(
        {comp->name(), comp->instruction_count(), comp->num_parameters(), comp->IsEntry()});
    s.instruction_count += comp->instruction_count();
    for (const auto& inst : comp->instructions()) {
      ++opcode_counts[std::string(HloOpcodeString(inst->opcode()))];
      if (inst->opcode() == HloOpcode::kCustomCall) ++targets[inst->custom_call_target()];
      if (inst->sharding().has_value()) {
        s.shardings.emplace_back(inst->name(), inst->sharding()->ToString());
      }
      if (IsCollective(inst->opcode())) {
        InspectSummary::CollectiveInfo c;
        c.name = inst->name();
        c.opcode = std::string(HloOpcodeString(inst->opcode()));
        c.computation = comp->name();
        c.shape = inst->shape().ToString();
        c.channel_id = inst->channel_id();
        if (inst->has_replica_groups()) {
          c.replica_groups = inst->replica_groups().ToString();
          const ReplicaGroups& g = inst->replica_groups();
          // `{}` means "all devices", which needs the device count; expand only explicit forms.
          if (g.iota_form || !g.groups.empty()) {
            int64_t n = 0;
            for (const auto& group : g.groups) {
              for (int64_t id : group) n = std::max(n, id + 1);
            }
            if (g.iota_form) n = g.iota.dims.size() == 2 ? g.iota.dims[0] * g.iota.dims[1] : 0;
            StatusOr<std::vector<std::vector<int64_t>>> e = ExpandReplicaGroups(g, n);
            if (e.ok()) c.groups = std::move(e).value();
          }
        }
        s.collectives.push_back(std::move(c));
      }
    }
  }
  for (const auto& [op, n] : opcode_counts) s.opcodes.emplace_back(op, n);
  std::stable_sort(s.opcodes.begin(), s.opcodes.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [t, n] : targets) s.custom_call_targets.emplace_back(t, n);
  if (const HloComputation* entry = module.entry_computation()) {
    for (const HloInstruction* p : entry->parameter_instructions()) {
      if (p != nullptr) s.parameters.push_back(Value(p->name(), p->shape(), p->sharding()));
    }
    const HloInstruction* root = entry->root_instruction();
    if (root != nullptr && root->shape().IsTuple()) {
      for (int64_t i = 0; i < root->shape().tuple_shapes_size(); ++i) {
        std::optional<HloSharding> sh;
        if (root->sharding().has_value() && root->sharding()->kind == HloSharding::Kind::kTuple &&
            i < static_cast<int64_t>(root->sharding()->tuple_elements.size())) {
          sh = root->sharding()->tuple_elements[static_cast<size_t>(i)];
        }
        s.outputs.push_back(
            Value(fmt::format("{}.{}", root->name(), i), root->shape().tuple_shapes(i), sh));
      }
    } else if (root != nullptr) {
      s.outputs.push_back(Value(root->name(), root->shape(), root->sharding()));
    }
  }
  const ModuleCost cost = AnalyzeCost(module);
  s.cost = cost.total;
  s.cost_notes = cost.notes;
  for (const HloInstruction* i : cost.unknown_flops) {
    s.cost_notes.push_back(fmt::format("'%{}' ({}): FLOP unknown, counted as 0", i->name(),
                                       HloOpcodeString(i->opcode())));
  }
  for (const HloInstruction* i : InstructionsWithoutShapeInference(module)) {
    s.uninferred_shapes.push_back(i->name());
  }
  return s;
}

Json InspectToJson(const InspectSummary& s) {
  Json j = Json::MakeObject();
  j["module"] = s.module_name;
  j["replica_count"] = s.replica_count;
  j["devices"] = s.devices;
  j["num_partitions"] = s.num_partitions;
  Json comps = Json::MakeArray();
  for (const auto& c : s.computations) {
    Json o = Json::MakeObject();
    o["name"] = c.name;
    o["instructions"] = c.instructions;
    o["parameters"] = c.parameters;
    o["entry"] = c.is_entry;
    comps.push_back(std::move(o));
  }
  j["computations"] = std::move(comps);
  j["instructions"] = s.instruction_count;
  Json ops = Json::MakeObject();
  for (const auto& [op, n] : s.opcodes) ops[op] = n;
  j["opcodes"] = std::move(ops);
  auto values = [](const std::vector<InspectSummary::ValueInfo>& vs) {
    Json a = Json::MakeArray();
    for (const auto& v : vs) {
      Json o = Json::MakeObject();
      o["name"] = v.name;
      o["shape"] = v.shape;
      o["bytes"] = v.bytes;
      if (!v.sharding.empty()) o["sharding"] = v.sharding;
      a.push_back(std::move(o));
    }
    return a;
  };
  j["parameters"] = values(s.parameters);
  j["outputs"] = values(s.outputs);
  j["flops"] = s.cost.flops;
  j["transcendentals"] = s.cost.transcendentals;
  j["bytes_accessed"] = s.cost.bytes_accessed;
  Json notes = Json::MakeArray();
  for (const auto& n : s.cost_notes) notes.push_back(n);
  j["cost_notes"] = std::move(notes);
  Json colls = Json::MakeArray();
  for (const auto& c : s.collectives) {
    Json o = Json::MakeObject();
    o["name"] = c.name;
    o["opcode"] = c.opcode;
    o["computation"] = c.computation;
    o["shape"] = c.shape;
    o["replica_groups"] = c.replica_groups;
    Json groups = Json::MakeArray();
    for (const auto& g : c.groups) groups.push_back(IntList(g));
    o["groups"] = std::move(groups);
    if (c.channel_id.has_value()) o["channel_id"] = *c.channel_id;
    colls.push_back(std::move(o));
  }
  j["collectives"] = std::move(colls);
  Json sh = Json::MakeObject();
  for (const auto& [name, text] : s.shardings) sh[name] = text;
  j["shardings"] = std::move(sh);
  Json targets = Json::MakeObject();
  for (const auto& [t, n] : s.custom_call_targets) targets[t] = n;
  j["custom_call_targets"] = std::move(targets);
  Json un = Json::MakeArray();
  for (const auto& n : s.uninferred_shapes) un.push_back(n);
  j["uninferred_shapes"] = std::move(un);
  return j;
}

std::string InspectToText(const InspectSummary& s) {
  // The replica count `tpusim run` uses: the header's, or what the collectives' groups need.
  const int64_t partitions = std::max<int64_t>(1, s.num_partitions);
  const int64_t replicas = std::max<int64_t>(s.replica_count, s.devices / partitions);
  std::string out = fmt::format("module {}  (replicas {}, partitions {})\n", s.module_name,
                                replicas, s.num_partitions);
  if (replicas != s.replica_count) {
    out += fmt::format(
        "note: the header says replica_count={}, but the collectives' replica groups "
        "name {} devices: `tpusim run` runs {} replicas\n",
        s.replica_count, s.devices, replicas);
  }
  out += fmt::format("{} instructions in {} computations\n", s.instruction_count,
                     s.computations.size());
  for (const auto& c : s.computations) {
    out += fmt::format("  {}{:<40} {:>6} instructions, {} parameters\n", c.is_entry ? "ENTRY " : "",
                       c.name, c.instructions, c.parameters);
  }
  out += "opcodes:\n";
  for (const auto& [op, n] : s.opcodes) out += fmt::format("  {:<28} {:>6}\n", op, n);
  out += "parameters:\n";
  for (const auto& v : s.parameters) {
    out += fmt::format("  {:<24} {:<40} {:>12} B{}\n", v.name, v.shape, v.bytes,
                       v.sharding.empty() ? "" : "  sharding=" + v.sharding);
  }
  out += "outputs:\n";
  for (const auto& v : s.outputs) {
    out += fmt::format("  {:<24} {:<40} {:>12} B{}\n", v.name, v.shape, v.bytes,
                       v.sharding.empty() ? "" : "  sharding=" + v.sharding);
  }
  out += fmt::format("cost (entry, once): {} FLOP, {} transcendentals, {} bytes accessed\n",
                     HumanCount(s.cost.flops), HumanCount(s.cost.transcendentals),
                     HumanCount(s.cost.bytes_accessed));
  for (const auto& n : s.cost_notes) out += fmt::format("  note: {}\n", n);
  if (!s.collectives.empty()) {
    out += "collectives:\n";
    for (const auto& c : s.collectives) {
      out += fmt::format("  {:<28} {:<20} {:<32} replica_groups={}{}\n", c.name, c.opcode, c.shape,
                         c.replica_groups.empty() ? "(none)" : c.replica_groups,
                         c.channel_id ? fmt::format(" channel_id={}", *c.channel_id) : "");
    }
  }
  if (!s.shardings.empty()) {
    out += "shardings:\n";
    for (const auto& [n, t] : s.shardings) out += fmt::format("  {:<28} {}\n", n, t);
  }
  if (!s.custom_call_targets.empty()) {
    out += "custom-call targets:\n";
    for (const auto& [t, n] : s.custom_call_targets) out += fmt::format("  {:<36} {:>6}\n", t, n);
  }
  if (!s.uninferred_shapes.empty()) {
    out += fmt::format("{} instruction(s) with shapes taken as written (no shape inference)\n",
                       s.uninferred_shapes.size());
  }
  return out;
}

}  // namespace tpusim::hlo
