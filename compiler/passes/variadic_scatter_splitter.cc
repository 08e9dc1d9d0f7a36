#include "compiler/passes/variadic_scatter_splitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// The parameter numbers `x` depends on.
void ParametersOf(const HloInstruction* x, std::set<int64_t>& out,
                  std::set<const HloInstruction*>& seen) {
  if (!seen.insert(x).second) return;
  if (x->opcode() == HloOpcode::kParameter) out.insert(x->parameter_number());
  for (const HloInstruction* op : x->operands()) ParametersOf(op, out, seen);
}

// The combiner's value for operand k of n, or nullptr when the combiner is not split by operand.
const HloInstruction* ElementOf(const HloComputation& f, int64_t k, int64_t n) {
  const HloInstruction* root = f.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kTuple || root->operand_count() != n) {
    return nullptr;
  }
  for (const auto& inst : f.instructions()) {  // no tuple plumbing inside: plain scalar ops
    if (inst.get() != root && !inst->shape().IsArray()) return nullptr;
    if (inst->opcode() == HloOpcode::kGetTupleElement) return nullptr;
  }
  std::set<int64_t> params;
  std::set<const HloInstruction*> seen;
  ParametersOf(root->operand(k), params, seen);
  for (int64_t p : params) {
    if (p != k && p != n + k) return nullptr;
  }
  return root->operand(k);
}

// A two-parameter computation (operand value, update) computing `value` of `f` for operand k.
HloComputation* SplitCombiner(hlo::HloModule& module, const HloComputation& f,
                              const HloInstruction* value, int64_t k, int64_t n) {
  auto comp = std::make_unique<HloComputation>(fmt::format("{}.operand{}", f.name(), k));
  std::map<const HloInstruction*, HloInstruction*> map;
  for (const auto& inst : f.instructions()) {  // parameters first, as numbered
    if (inst->opcode() != HloOpcode::kParameter) continue;
    const int64_t p = inst->parameter_number();
    if (p != k && p != n + k) continue;
    auto param = CloneInstruction(*inst, {}, inst->name());
    param->set_parameter_number(p == k ? 0 : 1);
    map[inst.get()] = comp->AddInstruction(std::move(param));
  }
  std::set<int64_t> unused;
  std::set<const HloInstruction*> needed;
  ParametersOf(value, unused, needed);
  for (const auto& inst : f.instructions()) {  // then every op `value` needs, in order
    if (inst->opcode() == HloOpcode::kParameter || needed.count(inst.get()) == 0) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    map[inst.get()] = comp->AddInstruction(CloneInstruction(*inst, operands, inst->name()));
  }
  // A combiner that ignores a parameter still takes two.
  for (int64_t p : {k, n + k}) {
    bool have = false;
    for (const auto& [orig, clone] : map) {
      have = have || (orig->opcode() == HloOpcode::kParameter && orig->parameter_number() == p);
    }
    if (!have) {
      const HloInstruction* src = f.instructions()[0].get();
      for (const auto& inst : f.instructions()) {
        if (inst->opcode() == HloOpcode::kParameter && inst->parameter_number() == p) {
          src = inst.get();
        }
      }
      auto param = CloneInstruction(*src, {}, fmt::format("unused.{}", p));
      param->set_parameter_number(p == k ? 0 : 1);
      comp->AddInstruction(std::move(param));
    }
  }
  comp->set_root_instruction(map.at(value));
  return module.AddComputation(std::move(comp));
}

}  // namespace

StatusOr<bool> VariadicScatterSplitter::Run(hlo::HloModule& module) {
  HloComputation* entry = module.entry_computation();
  std::vector<HloInstruction*> scatters;
  for (const auto& inst : entry->instructions()) {
    if (inst->opcode() == HloOpcode::kScatter && inst->operand_count() > 3 &&
        inst->operand_count() % 2 == 1 && inst->shape().IsTuple() && inst->to_apply() != nullptr) {
      scatters.push_back(inst.get());
    }
  }
  bool changed = false;
  for (HloInstruction* s : scatters) {
    const int64_t n = (s->operand_count() - 1) / 2;
    const HloComputation& f = *s->to_apply();
    std::vector<const HloInstruction*> values;
    for (int64_t k = 0; k < n; ++k) values.push_back(ElementOf(f, k, n));
    if (std::find(values.begin(), values.end(), static_cast<const HloInstruction*>(nullptr)) !=
        values.end())
      continue;
    HloBuilder b(entry, s);
    std::vector<HloInstruction*> parts;
    for (int64_t k = 0; k < n; ++k) {
      HloComputation* combiner = SplitCombiner(module, f, values[k], k, n);
      auto one = CloneInstructionAs(*s, HloOpcode::kScatter, s->shape().tuple_shapes(k),
                                    {s->operand(k), s->operand(n), s->operand(n + 1 + k)},
                                    b.UniqueName(fmt::format("{}.{}", s->name(), k)));
      one->set_to_apply(combiner);
      parts.push_back(b.Add(std::move(one)));
    }
    HloInstruction* t = b.Tuple(parts, ".split");
    s->ReplaceAllUsesWith(t);
    if (entry->root_instruction() == s) entry->set_root_instruction(t);
    entry->RemoveInstruction(s);
    changed = true;
  }
  return changed;
}

}  // namespace tpusim::compiler
