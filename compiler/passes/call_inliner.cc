#include "compiler/passes/call_inliner.h"

#include <map>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The callee: `calls=` (fusion, and call in some dumps) or `to_apply=` (call as JAX prints it).
const hlo::HloComputation* Callee(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kCall && i.opcode() != HloOpcode::kFusion) return nullptr;
  if (i.called_computation() != nullptr) return i.called_computation();
  return i.opcode() == HloOpcode::kCall ? i.to_apply() : nullptr;
}

bool HasToken(const hlo::Shape& s) {
  if (s.IsTuple()) {
    for (int64_t i = 0; i < s.tuple_shapes_size(); ++i) {
      if (HasToken(s.tuple_shapes(i))) return true;
    }
    return false;
  }
  return !s.IsArray();
}

// A conditional whose branches all exist and whose result holds only arrays.
bool IsIfConvertible(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kConditional || i.branch_computations().empty() ||
      HasToken(i.shape()) ||
      i.operand_count() != static_cast<int64_t>(i.branch_computations().size()) + 1) {
    return false;
  }
  for (const hlo::HloComputation* c : i.branch_computations()) {
    if (c == nullptr || c->num_parameters() != 1) return false;
  }
  return true;
}

bool IsInlinable(const HloInstruction& i) { return Callee(i) != nullptr || IsIfConvertible(i); }

// Copies `callee`'s instructions before `at` with its parameters bound to `args`; returns the copy
// of its root.
HloInstruction* CopyBody(hlo::HloComputation& comp, const hlo::HloComputation& callee,
                         const std::vector<HloInstruction*>& args, HloInstruction* at) {
  HloBuilder b(&comp, at);
  std::map<const HloInstruction*, HloInstruction*> map;
  for (const auto& up : callee.instructions()) {
    const HloInstruction& inst = *up;
    if (inst.opcode() == HloOpcode::kParameter) {
      map[&inst] = args.at(static_cast<size_t>(inst.parameter_number()));
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst.operands()) operands.push_back(map.at(op));
    auto clone = CloneInstruction(inst, operands, b.UniqueName(inst.name()));
    map[&inst] = comp.AddInstructionBefore(std::move(clone), at);
  }
  return map.at(callee.root_instruction());
}

void Inline(hlo::HloComputation& comp, HloInstruction* call) {
  HloInstruction* root = CopyBody(comp, *Callee(*call), call->operands(), call);
  call->ReplaceAllUsesWith(root);
  comp.RemoveInstruction(call);
}

// Per array leaf of `shape`: `results[k]`'s leaf where `take[k]` holds, checked for k = 0, 1, ...
// in turn, else the last result's (select chains, built leaf by leaf through get-tuple-elements).
HloInstruction* SelectLeaves(HloBuilder& b, const hlo::Shape& shape,
                             const std::vector<HloInstruction*>& results,
                             const std::vector<HloInstruction*>& take) {
  if (shape.IsTuple()) {
    std::vector<HloInstruction*> elements;
    for (int64_t e = 0; e < shape.tuple_shapes_size(); ++e) {
      std::vector<HloInstruction*> parts;
      for (HloInstruction* r : results) {
        auto g = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement,
                                                  shape.tuple_shapes(e), b.UniqueName(r->name()));
        g->AppendOperand(r);
        g->set_tuple_index(e);
        parts.push_back(b.Add(std::move(g)));
      }
      elements.push_back(SelectLeaves(b, shape.tuple_shapes(e), parts, take));
    }
    return b.Tuple(elements, "branch_result");
  }
  HloInstruction* out = results.back();
  for (size_t k = results.size() - 1; k-- > 0;) {
    HloInstruction* p = take[k];
    if (shape.rank() > 0) {
      p = b.Broadcast(p, hlo::Shape(hlo::PrimitiveType::kPred, shape.dimensions()), {}, "taken");
    }
    out = b.Select(p, results[k], out, "branch_select");
  }
  return out;
}

// if-conversion: every branch runs (branch k on operand k + 1) and a select per result leaf keeps
// the one XLA would run: a pred conditional runs branch 0 when true; an s32 index runs branch k
// when index == k, the last branch when it is out of range.
void IfConvert(hlo::HloComputation& comp, HloInstruction* cond) {
  const auto& branches = cond->branch_computations();
  std::vector<HloInstruction*> results;
  for (size_t k = 0; k < branches.size(); ++k) {
    results.push_back(
        CopyBody(comp, *branches[k], {cond->operand(static_cast<int64_t>(k) + 1)}, cond));
  }
  HloBuilder b(&comp, cond);
  HloInstruction* selector = cond->operand(0);
  std::vector<HloInstruction*> take;
  if (selector->shape().element_type() == hlo::PrimitiveType::kPred) {
    take.push_back(selector);
  } else {
    for (size_t k = 0; k + 1 < branches.size(); ++k) {
      take.push_back(b.Compare(
          selector,
          b.ScalarConstant(selector->shape().element_type(), static_cast<double>(k), "branch"),
          hlo::ComparisonDirection::kEq, "is_branch"));
    }
  }
  HloInstruction* out = SelectLeaves(b, cond->shape(), results, take);
  cond->ReplaceAllUsesWith(out);
  comp.RemoveInstruction(cond);
}

}  // namespace

StatusOr<bool> CallInliner::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  bool changed = false;
  for (int round = 0; round < 64; ++round) {
    std::vector<HloInstruction*> calls;
    for (const auto& i : entry->instructions()) {
      if (IsInlinable(*i)) calls.push_back(i.get());
    }
    if (calls.empty()) break;
    for (HloInstruction* c : calls) {
      if (c->opcode() == HloOpcode::kConditional) {
        IfConvert(*entry, c);
      } else {
        Inline(*entry, c);
      }
    }
    changed = true;
  }
  return changed;
}

}  // namespace tpusim::compiler
