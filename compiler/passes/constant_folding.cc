#include "compiler/passes/constant_folding.h"

#include <fmt/format.h>

#include <memory>
#include <map>
#include <set>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"
#include "hlo/eval/evaluator.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool FoldableOpcode(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kIota:
    case HloOpcode::kGather:
    case HloOpcode::kDynamicSlice:
      return true;
    case HloOpcode::kRng:
      return false;
    default:
      return hlo::IsElementwise(inst.opcode());
  }
}

bool IsFoldable(const HloInstruction& inst,
                const std::function<bool(const HloInstruction&)>& keep) {
  // A broadcast the VPU reads in place (a scalar or a row/column vector operand of a binary op)
  // costs nothing; as a constant it would be loaded element by element.
  if (keep && keep(inst)) return false;
  if (!FoldableOpcode(inst) || !inst.shape().IsArray() || !inst.called_computations().empty() ||
      inst.shape().ElementCount() > kMaxFoldedElements) {
    return false;
  }
  for (const HloInstruction* op : inst.operands()) {
    if (op->opcode() != HloOpcode::kConstant || !op->shape().IsArray() || op->literal().elided) {
      return false;
    }
  }
  return true;
}

// The value of `inst` on its constant operands, from the evaluator.
StatusOr<hlo::Literal> Evaluate(const HloInstruction& inst) {
  hlo::HloModule mini("constant-folding");
  auto comp = std::make_unique<hlo::HloComputation>("fold");
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    operands.push_back(
        comp->AddInstruction(CloneInstruction(*inst.operand(i), {}, fmt::format("c{}", i))));
  }
  comp->set_root_instruction(comp->AddInstruction(CloneInstruction(inst, operands, "r")));
  mini.set_entry_computation(mini.AddComputation(std::move(comp)));
  hlo::Evaluator ev;
  return ev.Evaluate(mini, {});
}

hlo::LiteralValues ValuesOf(const hlo::Literal& lit) {
  hlo::LiteralValues v;
  const bool fp = hlo::IsFloatingPoint(lit.shape().element_type());
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (fp) {
      v.float_values.push_back(lit.GetAsDouble(i));
    } else {
      v.int_values.push_back(lit.GetAsInt64(i));
    }
  }
  return v;
}

}  // namespace

StatusOr<bool> ConstantFolding::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  std::vector<HloInstruction*> order;
  for (const auto& up : entry->instructions()) order.push_back(up.get());
  // The folded instructions and the operands they leave unused are removed together at the end,
  // and each constant, appended when made, is moved before the instruction it replaces in one
  // reordering: inserting and removing them one by one made folding an unrolled loop quadratic in
  // its size (each is a search of the instruction list).
  std::vector<HloInstruction*> dead;
  std::set<HloInstruction*> dead_set;
  std::map<const HloInstruction*, const HloInstruction*> folded_of;  // instruction -> its constant
  for (HloInstruction* inst : order) {
    if (dead_set.count(inst) != 0 || !IsFoldable(*inst, keep_)) continue;
    auto value = Evaluate(*inst);
    if (!value.ok()) continue;  // whatever the evaluator refuses stays for the lowering to judge
    HloBuilder b(entry, inst);
    auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant, inst->shape(),
                                              b.UniqueName(inst->name() + ".folded"));
    c->mutable_literal() = ValuesOf(*value);
    c->set_location(inst->location());
    c->mutable_metadata() = inst->metadata();
    HloInstruction* folded = entry->AddInstruction(std::move(c));
    folded_of[inst] = folded;
    const std::vector<HloInstruction*> operands = inst->operands();
    inst->ReplaceAllUsesWith(folded);
    inst->DetachOperands();
    dead.push_back(inst);
    dead_set.insert(inst);
    folded->set_name(inst->name());  // both hold the name until `inst` is removed below
    for (HloInstruction* op : operands) {
      if (dead_set.count(op) == 0 && op->users().empty() && op != entry->root_instruction()) {
        dead.push_back(op);
        dead_set.insert(op);
      }
    }
  }
  if (folded_of.empty()) return false;
  std::set<const HloInstruction*> appended;
  for (const auto& [inst, folded] : folded_of) appended.insert(folded);
  std::vector<const HloInstruction*> placed;
  for (const auto& up : entry->instructions()) {
    if (appended.count(up.get()) != 0) continue;
    if (auto it = folded_of.find(up.get()); it != folded_of.end()) placed.push_back(it->second);
    placed.push_back(up.get());
  }
  entry->ReorderInstructions(placed);
  entry->RemoveInstructions(dead);
  return true;
}

}  // namespace tpusim::compiler
