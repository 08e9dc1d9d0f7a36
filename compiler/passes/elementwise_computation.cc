#include "compiler/passes/elementwise_computation.h"

#include <fmt/format.h>

#include <map>
#include <memory>

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

bool SupportedInstruction(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
      return IsScalar(inst.shape());
    case HloOpcode::kTuple:
      return true;
    case HloOpcode::kGetTupleElement:
      return inst.operand(0)->opcode() == HloOpcode::kTuple;
    case HloOpcode::kBitcastConvert:
      return IsScalar(inst.shape());
    default:
      return hlo::IsElementwise(inst.opcode()) && IsScalar(inst.shape());
  }
}

}  // namespace

bool IsElementwiseComputation(const hlo::HloComputation& scalar) {
  for (const auto& inst : scalar.instructions()) {
    if (!SupportedInstruction(*inst)) return false;
  }
  for (const Shape* leaf : scalar.root_instruction()->shape().Leaves()) {
    if (!IsScalar(*leaf)) return false;
  }
  return true;
}

StatusOr<std::vector<HloInstruction*>> ApplyElementwise(HloBuilder& b,
                                                        const hlo::HloComputation& scalar,
                                                        const std::vector<HloInstruction*>& args,
                                                        const std::vector<int64_t>& dims) {
  if (!IsElementwiseComputation(scalar)) {
    return InvalidArgument(
        fmt::format("computation '%{}' is not made of elementwise scalar ops", scalar.name()));
  }
  if (static_cast<int64_t>(args.size()) != scalar.num_parameters()) {
    return InvalidArgument(fmt::format("computation '%{}' takes {} parameters, {} given",
                                       scalar.name(), scalar.num_parameters(), args.size()));
  }
  // Each scalar instruction's array values (one per leaf; several for a tuple).
  std::map<const HloInstruction*, std::vector<HloInstruction*>> values;
  for (const auto& up : scalar.instructions()) {
    const HloInstruction& inst = *up;
    switch (inst.opcode()) {
      case HloOpcode::kParameter: {
        HloInstruction* a = args[static_cast<size_t>(inst.parameter_number())];
        if (a->shape().element_type() != inst.shape().element_type() ||
            a->shape().dimensions() != dims) {
          return InvalidArgument(fmt::format("argument {} is {}, parameter '%{}' is {}",
                                             inst.parameter_number(), a->shape().ToString(false),
                                             inst.name(), inst.shape().ToString(false)));
        }
        values[&inst] = {a};
        break;
      }
      case HloOpcode::kConstant: {
        auto c = CloneInstruction(inst, {}, b.UniqueName(scalar.name() + "." + inst.name()));
        HloInstruction* k = b.Add(std::move(c));
        values[&inst] = {b.Broadcast(k, Shape(inst.shape().element_type(), dims), {},
                                     scalar.name() + "." + inst.name() + ".b")};
        break;
      }
      case HloOpcode::kTuple: {
        std::vector<HloInstruction*> leaves;
        for (const HloInstruction* op : inst.operands()) {
          const auto& v = values.at(op);
          leaves.insert(leaves.end(), v.begin(), v.end());
        }
        values[&inst] = std::move(leaves);
        break;
      }
      case HloOpcode::kGetTupleElement: {
        const HloInstruction* tuple = inst.operand(0);
        values[&inst] = values.at(tuple->operand(inst.tuple_index()));
        break;
      }
      default: {
        std::vector<HloInstruction*> ops;
        for (const HloInstruction* op : inst.operands()) ops.push_back(values.at(op)[0]);
        auto c = CloneInstruction(inst, ops, b.UniqueName(scalar.name() + "." + inst.name()));
        c->mutable_shape() = Shape(inst.shape().element_type(), dims);
        values[&inst] = {b.Add(std::move(c))};
        break;
      }
    }
  }
  return values.at(scalar.root_instruction());
}

}  // namespace tpusim::compiler
