#include "compiler/passes/topk_expander.h"

#include <fmt/format.h>

#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// compare(p0, p1) GT (or LT) over (type, type, s32, s32): the module's comparator for topk.
hlo::HloComputation* GetOrAddComparator(hlo::HloModule& module, PrimitiveType type, bool largest) {
  const std::string name = "tpusim.topk_compare." + std::string(hlo::PrimitiveTypeName(type)) +
                           (largest ? ".gt" : ".lt");
  if (hlo::HloComputation* c = module.FindComputation(name)) return c;
  auto comp = std::make_unique<hlo::HloComputation>(name);
  std::vector<HloInstruction*> params;
  const PrimitiveType types[] = {type, type, PrimitiveType::kS32, PrimitiveType::kS32};
  for (int64_t i = 0; i < 4; ++i) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                              Shape::Scalar(types[i]), fmt::format("p{}", i));
    p->set_parameter_number(i);
    params.push_back(comp->AddInstruction(std::move(p)));
  }
  auto cmp = std::make_unique<HloInstruction>(HloOpcode::kCompare,
                                              Shape::Scalar(PrimitiveType::kPred), "compare");
  cmp->set_comparison_direction(largest ? hlo::ComparisonDirection::kGt
                                        : hlo::ComparisonDirection::kLt);
  cmp->AppendOperand(params[0]);
  cmp->AppendOperand(params[1]);
  comp->set_root_instruction(comp->AddInstruction(std::move(cmp)));
  return module.AddComputation(std::move(comp));
}

// The integer value of raw attribute `name`, or `fallback`.
int64_t IntAttribute(const HloInstruction& inst, std::string_view name, int64_t fallback) {
  const std::string* v = inst.FindRawAttribute(name);
  if (v == nullptr) return fallback;
  int64_t out = fallback;
  std::from_chars(v->data(), v->data() + v->size(), out);
  return out;
}

bool Expandable(const HloInstruction& t) {
  if (t.opcode() != HloOpcode::kTopK || t.operand_count() != 1) return false;
  const Shape& x = t.operand(0)->shape();
  const int64_t k = IntAttribute(t, "k", -1);
  return x.IsArray() && x.rank() >= 1 && k >= 0 && k <= x.dimensions(x.rank() - 1) &&
         t.shape().IsTuple() && t.shape().tuple_shapes_size() == 2;
}

void Expand(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* t) {
  HloBuilder b(&comp, t);
  HloInstruction* x = t->operand(0);
  const Shape& xs = x->shape();
  const int64_t last = xs.rank() - 1;
  const int64_t k = IntAttribute(*t, "k", 0);
  const std::string* largest_attr = t->FindRawAttribute("largest");
  const bool largest = largest_attr == nullptr || *largest_attr != "false";
  auto iota = std::make_unique<HloInstruction>(
      HloOpcode::kIota, Shape(PrimitiveType::kS32, xs.dimensions()), b.UniqueName(t->name() + ".index"));
  iota->set_iota_dimension(last);
  HloInstruction* index = b.Add(std::move(iota));
  Shape sorted_shape = Shape::Tuple({Shape(xs.element_type(), xs.dimensions()),
                                     Shape(PrimitiveType::kS32, xs.dimensions())});
  auto sort = std::make_unique<HloInstruction>(HloOpcode::kSort, sorted_shape,
                                               b.UniqueName(t->name() + ".sort"));
  sort->mutable_dimensions() = {last};
  sort->set_has_dimensions(true);
  sort->set_is_stable(true);
  sort->set_to_apply(GetOrAddComparator(module, xs.element_type(), largest));
  sort->AppendOperand(x);
  sort->AppendOperand(index);
  HloInstruction* sorted = b.Add(std::move(sort));
  std::vector<int64_t> start(static_cast<size_t>(xs.rank()), 0);
  std::vector<int64_t> limit = xs.dimensions();
  limit[static_cast<size_t>(last)] = k;
  std::vector<int64_t> step(static_cast<size_t>(xs.rank()), 1);
  std::vector<HloInstruction*> parts;
  for (int64_t i = 0; i < 2; ++i) {
    auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement,
                                                sorted_shape.tuple_shapes(i),
                                                b.UniqueName(t->name() + ".sorted"));
    gte->set_tuple_index(i);
    gte->AppendOperand(sorted);
    parts.push_back(b.Slice(b.Add(std::move(gte)), start, limit, step, "top"));
  }
  t->ReplaceAllUsesWith(b.Tuple(parts, "topk"));
  comp.RemoveInstruction(t);
}

}  // namespace

StatusOr<bool> TopKExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, [&module](hlo::HloComputation& comp, HloInstruction* t) {
    Expand(module, comp, t);
  });
}

}  // namespace tpusim::compiler
