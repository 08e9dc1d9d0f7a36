#include "compiler/passes/unique_scatter_expander.h"

#include <memory>
#include <string>
#include <vector>

#include "compiler/passes/elementwise_computation.h"
#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

bool IsParam(const HloInstruction* i, int64_t n) {
  return i->opcode() == HloOpcode::kParameter && i->parameter_number() == n;
}

// The combiners the DMA lowering runs itself (lower_gather.cc): assignment, or add / maximum /
// minimum of the two parameters.
bool DmaCombiner(const HloComputation& f) {
  const HloInstruction* root = f.root_instruction();
  if (root == nullptr) return false;
  if (IsParam(root, 1)) return true;
  if (root->operand_count() != 2) return false;
  const bool params = (IsParam(root->operand(0), 0) && IsParam(root->operand(1), 1)) ||
                      (IsParam(root->operand(0), 1) && IsParam(root->operand(1), 0));
  return params && (root->opcode() == HloOpcode::kAdd || root->opcode() == HloOpcode::kMaximum ||
                    root->opcode() == HloOpcode::kMinimum);
}

bool Expandable(const HloInstruction& s) {
  if (s.opcode() != HloOpcode::kScatter || !s.unique_indices() || s.to_apply() == nullptr ||
      s.operand_count() < 3 || s.operand_count() % 2 == 0 ||
      !IsElementwiseComputation(*s.to_apply())) {
    return false;
  }
  const int64_t n = (s.operand_count() - 1) / 2;
  for (int64_t k = 0; k < n; ++k) {
    if (!s.operand(k)->shape().IsArray() || !s.operand(n + 1 + k)->shape().IsArray()) return false;
  }
  return n > 1 || !DmaCombiner(*s.to_apply());
}

// The module's scalar assignment combiner for `type`: ROOT = parameter 1.
HloComputation* GetOrAddAssign(hlo::HloModule& module, PrimitiveType type) {
  const std::string name = "tpusim.assign." + std::string(hlo::PrimitiveTypeName(type));
  if (HloComputation* c = module.FindComputation(name)) return c;
  auto comp = std::make_unique<HloComputation>(name);
  auto x = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape::Scalar(type), "x");
  x->set_parameter_number(0);
  auto y = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape::Scalar(type), "y");
  y->set_parameter_number(1);
  comp->AddInstruction(std::move(x));
  comp->set_root_instruction(comp->AddInstruction(std::move(y)));
  return module.AddComputation(std::move(comp));
}

// scatter(base, indices, update) with assignment, the dimension numbers of `s`.
HloInstruction* AssignScatter(hlo::HloModule& module, HloBuilder& b, const HloInstruction& s,
                              HloInstruction* base, HloInstruction* indices,
                              HloInstruction* update, const std::string& suffix) {
  auto one = CloneInstructionAs(s, HloOpcode::kScatter, base->shape(), {base, indices, update},
                                b.UniqueName(s.name() + "." + suffix));
  one->set_to_apply(GetOrAddAssign(module, base->shape().element_type()));
  return b.Add(std::move(one));
}

HloInstruction* Full(HloBuilder& b, PrimitiveType type, double v, const std::vector<int64_t>& dims,
                     const std::string& suffix) {
  return b.Splat(Shape(type, dims), v, suffix, suffix + "_b");
}

}  // namespace

StatusOr<bool> UniqueScatterExpander::Run(hlo::HloModule& module) {
  return RewriteEach(
      module, Expandable, [&](HloComputation& comp, HloInstruction* s) -> StatusOr<bool> {
        HloBuilder b(&comp, s);
        const int64_t n = (s->operand_count() - 1) / 2;
        HloInstruction* indices = s->operand(n);
        const std::vector<int64_t>& dims = s->operand(0)->shape().dimensions();
        std::vector<HloInstruction*> args;
        for (int64_t k = 0; k < n; ++k) args.push_back(s->operand(k));
        for (int64_t k = 0; k < n; ++k) {
          HloInstruction* op = s->operand(k);
          HloInstruction* zeros = Full(b, op->shape().element_type(), 0, dims, "zero");
          args.push_back(AssignScatter(module, b, *s, zeros, indices, s->operand(n + 1 + k),
                                       "placed"));
        }
        const std::vector<int64_t>& udims = s->operand(n + 1)->shape().dimensions();
        HloInstruction* hit =
            AssignScatter(module, b, *s, Full(b, PrimitiveType::kPred, 0, dims, "none"), indices,
                          Full(b, PrimitiveType::kPred, 1, udims, "all"), "hit");
        TPUSIM_ASSIGN_OR_RETURN(std::vector<HloInstruction*> combined,
                                ApplyElementwise(b, *s->to_apply(), args, dims));
        std::vector<HloInstruction*> results;
        for (int64_t k = 0; k < n; ++k) {
          results.push_back(b.Select(hit, combined[static_cast<size_t>(k)], s->operand(k),
                                     "combined"));
        }
        HloInstruction* result = n == 1 ? results[0] : b.Tuple(results, "combined");
        s->ReplaceAllUsesWith(result);
        comp.RemoveInstruction(s);
        return true;
      });
}

}  // namespace tpusim::compiler
