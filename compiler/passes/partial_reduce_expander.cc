#include "compiler/passes/partial_reduce_expander.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "hlo/partial_reduce.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

// The reducer (acc_1..acc_k, x_1..x_k) -> tuple(cmp(acc_1, x_1, ...) ? acc_i : x_i): the
// comparator's instructions cloned with its parameters 2i, 2i + 1 bound to acc_i, x_i.
hlo::HloComputation* AddReducer(hlo::HloModule& module, const HloInstruction& call,
                                const hlo::HloComputation& cmp, int64_t k) {
  std::string name = "tpusim.partial_reduce." + call.name();
  for (int n = 1; module.FindComputation(name) != nullptr; ++n) {
    name = fmt::format("tpusim.partial_reduce.{}.{}", call.name(), n);
  }
  auto comp = std::make_unique<hlo::HloComputation>(name);
  std::vector<HloInstruction*> params;
  for (int64_t i = 0; i < 2 * k; ++i) {
    const Shape& s = cmp.parameter_instruction(2 * (i % k) + i / k)->shape();
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, s, fmt::format("p{}", i));
    p->set_parameter_number(i);
    params.push_back(comp->AddInstruction(std::move(p)));
  }
  std::map<const HloInstruction*, HloInstruction*> mapped;
  for (int64_t i = 0; i < k; ++i) {
    mapped[cmp.parameter_instruction(2 * i)] = params[static_cast<size_t>(i)];
    mapped[cmp.parameter_instruction(2 * i + 1)] = params[static_cast<size_t>(k + i)];
  }
  for (const auto& inst : cmp.instructions()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst->operands()) operands.push_back(mapped.at(op));
    mapped[inst.get()] = comp->AddInstruction(CloneInstruction(*inst, operands, inst->name()));
  }
  HloInstruction* keep = mapped.at(cmp.root_instruction());
  std::vector<Shape> shapes;
  auto root = std::make_unique<HloInstruction>(HloOpcode::kTuple, Shape(), "picked");
  for (int64_t i = 0; i < k; ++i) {
    HloInstruction* acc = params[static_cast<size_t>(i)];
    auto sel = std::make_unique<HloInstruction>(HloOpcode::kSelect, acc->shape(),
                                                fmt::format("pick.{}", i));
    sel->AppendOperand(keep);
    sel->AppendOperand(acc);
    sel->AppendOperand(params[static_cast<size_t>(k + i)]);
    root->AppendOperand(comp->AddInstruction(std::move(sel)));
    shapes.push_back(acc->shape());
  }
  root->mutable_shape() = Shape::Tuple(shapes);
  comp->set_root_instruction(comp->AddInstruction(std::move(root)));
  return module.AddComputation(std::move(comp));
}

StatusOr<bool> Expand(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* call) {
  StatusOr<hlo::PartialReduceForm> form = hlo::GetPartialReduceForm(*call);
  if (!form.ok()) {
    return LocatedError(
        module.source_name(), "", call->location(),
        fmt::format("%{} (custom-call): {}", call->name(), form.status().message()));
  }
  const hlo::PartialReduceForm& f = *form;
  const size_t d = static_cast<size_t>(f.dimension);
  const int64_t folds = (f.n + f.bins - 1) / f.bins;  // <= 2^R: only the folds that hold data
  HloBuilder b(&comp, call);
  auto reduce = std::make_unique<HloInstruction>(HloOpcode::kReduce, call->shape(),
                                                 b.UniqueName(call->name() + ".reduce"));
  for (int64_t i = 0; i < f.operands; ++i) {
    HloInstruction* x = call->operand(i);
    HloInstruction* init = call->operand(f.operands + i);
    if (folds * f.bins > f.n) {
      hlo::PaddingConfig pad;
      pad.dimensions.resize(static_cast<size_t>(x->shape().rank()));
      pad.dimensions[d].edge_padding_high = folds * f.bins - f.n;
      x = b.Pad(x, init, pad, "bins_pad");
    }
    std::vector<int64_t> dims = x->shape().dimensions();
    dims[d] = f.bins;
    dims.insert(dims.begin() + static_cast<int64_t>(d), folds);
    reduce->AppendOperand(b.Reshape(x, dims, "bins"));
  }
  for (int64_t i = 0; i < f.operands; ++i) {
    reduce->AppendOperand(call->operand(f.operands + i));
  }
  reduce->mutable_dimensions() = {f.dimension};
  reduce->set_has_dimensions(true);
  reduce->set_to_apply(AddReducer(module, *call, *call->called_computations()[0], f.operands));
  HloInstruction* r = b.Add(std::move(reduce));
  call->ReplaceAllUsesWith(r);
  if (comp.root_instruction() == call) comp.set_root_instruction(r);
  comp.RemoveInstruction(call);
  return true;
}

}  // namespace

StatusOr<bool> PartialReduceExpander::Run(hlo::HloModule& module) {
  return RewriteEach(
      module, [](const HloInstruction& inst) { return hlo::IsPartialReduce(inst); },
      [&module](hlo::HloComputation& comp, HloInstruction* call) {
        return Expand(module, comp, call);
      });
}

}  // namespace tpusim::compiler
