#include "compiler/passes/all_reduce_combiner.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/loop_region.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The key that must match for two all-reduces to merge; nullopt for non-candidates.
std::optional<std::string> CombineKey(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kAllReduce || inst.operand_count() != 1 ||
      inst.shape().IsTuple() || inst.operand(0)->shape().IsTuple() || inst.to_apply() == nullptr) {
    return std::nullopt;
  }
  const HloOpcode reducer = inst.to_apply()->root_instruction()->opcode();
  if (reducer != HloOpcode::kAdd && reducer != HloOpcode::kMaximum &&
      reducer != HloOpcode::kMinimum) {
    return std::nullopt;
  }
  return inst.replica_groups().ToString() + "|" + (inst.channel_id() ? "channel" : "") + "|" +
         (inst.use_global_device_ids() ? "global" : "") + "|" +
         std::string(hlo::HloOpcodeString(reducer)) + "|" +
         std::string(hlo::PrimitiveTypeName(inst.shape().element_type()));
}

int64_t ArrayBytes(const hlo::Shape& s) {
  int64_t n = hlo::ByteWidth(s.element_type());
  for (int64_t d : s.dimensions()) n *= d;
  return n;
}

// Kahn's algorithm; among ready instructions the smallest `rank` goes first.
std::vector<const HloInstruction*> TopologicalOrder(
    const hlo::HloComputation& comp, const std::map<const HloInstruction*, double>& rank) {
  std::map<const HloInstruction*, int64_t> pending;
  std::multimap<double, const HloInstruction*> ready;
  for (const auto& up : comp.instructions()) {
    std::set<const HloInstruction*> ops(up->operands().begin(), up->operands().end());
    pending[up.get()] = static_cast<int64_t>(ops.size());
    if (ops.empty()) ready.emplace(rank.at(up.get()), up.get());
  }
  std::vector<const HloInstruction*> order;
  while (!ready.empty()) {
    const HloInstruction* next = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(next);
    std::set<const HloInstruction*> users(next->users().begin(), next->users().end());
    for (const HloInstruction* u : users) {
      if (--pending[u] == 0) ready.emplace(rank.at(u), u);
    }
  }
  return order;
}

// Merges one bucket of mutually independent all-reduces (see the header); false if none has two.
bool CombineOneBucket(hlo::HloComputation* comp, int64_t threshold_bytes) {
  // Candidate ancestors of every instruction, in text order.
  std::vector<HloInstruction*> cands;
  std::map<const HloInstruction*, size_t> cand_index;
  for (const auto& up : comp->instructions()) {
    if (CombineKey(*up)) {
      cand_index[up.get()] = cands.size();
      cands.push_back(up.get());
    }
  }
  if (cands.size() < 2) return false;
  // All-reduces merge only within one loop region (loop_region.h): a region runs many times.
  auto regions = FindLoopRegions(*comp);
  if (!regions.ok()) return false;
  std::map<const HloInstruction*, std::vector<bool>> anc;
  for (const auto& up : comp->instructions()) {
    std::vector<bool> a(cands.size(), false);
    for (const HloInstruction* op : up->operands()) {
      const std::vector<bool>& oa = anc.at(op);
      for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] || oa[i];
      if (auto it = cand_index.find(op); it != cand_index.end()) a[it->second] = true;
    }
    anc[up.get()] = std::move(a);
  }
  std::map<std::string, std::vector<HloInstruction*>> buckets;
  std::map<std::string, int64_t> bytes;
  std::vector<std::string> key_order;
  for (HloInstruction* c : cands) {
    const hlo::HloInstruction* region = regions->InnermostOf(c);
    const std::string key = *CombineKey(*c) + "|" + (region == nullptr ? "" : region->name());
    auto& members = buckets[key];
    if (members.empty()) key_order.push_back(key);
    const int64_t b = ArrayBytes(c->shape());
    bool independent = true;
    for (const HloInstruction* m : members) independent = independent && !anc.at(c)[cand_index[m]];
    if (!independent || bytes[key] + b > threshold_bytes) continue;
    members.push_back(c);
    bytes[key] += b;
  }
  for (const std::string& key : key_order) {
    std::vector<HloInstruction*>& members = buckets[key];
    if (members.size() < 2) continue;
    std::map<const HloInstruction*, double> rank;
    for (const auto& up : comp->instructions()) rank[up.get()] = static_cast<double>(rank.size());
    HloInstruction* last = members.back();
    std::vector<HloInstruction*> operands;
    std::vector<hlo::Shape> shapes;
    for (HloInstruction* m : members) {
      operands.push_back(m->operand(0));
      shapes.push_back(m->shape());
    }
    HloBuilder builder(comp, last);
    std::unique_ptr<HloInstruction> combined = CloneInstruction(
        *members.front(), operands, builder.UniqueName(last->name() + ".combined"));
    combined->mutable_shape() = hlo::Shape::Tuple(shapes);
    HloInstruction* c = builder.Add(std::move(combined));
    rank[c] = rank.at(last);
    for (size_t i = 0; i < members.size(); ++i) {
      HloInstruction* m = members[i];
      auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, m->shape(),
                                                  builder.UniqueName(m->name() + ".element"));
      gte->AppendOperand(c);
      gte->set_tuple_index(static_cast<int64_t>(i));
      HloInstruction* g = builder.Add(std::move(gte));
      // Distinct ranks in member order, between `last` and the next instruction: with one rank
      // for all, the ready queue took them in the order of their addresses, which moved the
      // instructions scheduled between them with the heap layout (a run's cycles changed with the
      // length of the input's path).
      rank[g] = rank.at(last) + 0.5 * static_cast<double>(i + 1) /
                                    static_cast<double>(members.size() + 1);
      m->ReplaceAllUsesWith(g);
    }
    for (HloInstruction* m : members) comp->RemoveInstruction(m);
    comp->ReorderInstructions(TopologicalOrder(*comp, rank));
    return true;
  }
  return false;
}

}  // namespace

StatusOr<bool> AllReduceCombiner::Run(hlo::HloModule& module) {
  bool changed = false;
  while (CombineOneBucket(module.entry_computation(), threshold_bytes_)) changed = true;
  return changed;
}

}  // namespace tpusim::compiler
