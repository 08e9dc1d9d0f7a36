#include "driver/partition_check.h"

#include <fmt/format.h>

#include <memory>
#include <utility>
#include <vector>

#include "hlo/clone.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/opcode.h"

namespace tpusim::driver {
namespace {

using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

bool Widens(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

// Widens every leaf of `shape` in place; false if a leaf has a floating type f64 cannot stand for
// exactly in this comparison (f8, complex).
bool WidenShape(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& s : shape.mutable_tuple_shapes()) {
      if (!WidenShape(s)) return false;
    }
    return true;
  }
  const PrimitiveType t = shape.element_type();
  if (hlo::IsFloat8(t) || hlo::IsComplex(t)) return false;
  if (Widens(t)) shape.set_element_type(PrimitiveType::kF64);
  return true;
}

bool HasFloatLeaf(const Shape& shape) {
  return hlo::AnyLeafType(shape, [](PrimitiveType t) { return hlo::IsFloatingPoint(t); });
}

Status Refuse(const hlo::HloInstruction& inst, std::string_view why) {
  return Unimplemented(fmt::format("%{} ({}): {}; the partitioning is not checked in f64",
                                   inst.name(), hlo::HloOpcodeString(inst.opcode()), why));
}

// A bitcast-convert reinterprets the bits of its own types (JAX makes uniform random floats from
// u32 bits so): widened, it keeps them, with a convert to its widened operand type before it and
// from its result type to f64 after it.
Status KeepBitcastConvertTypes(hlo::HloComputation& comp, hlo::HloInstruction* bc,
                               const Shape& operand_shape, const Shape& result_shape) {
  hlo::HloInstruction* operand = bc->operand(0);
  if (operand->shape().element_type() != operand_shape.element_type()) {
    auto back = std::make_unique<hlo::HloInstruction>(HloOpcode::kConvert, operand_shape,
                                                      comp.UniqueName(bc->name() + ".narrow"));
    back->AppendOperand(operand);
    bc->ReplaceOperandWith(0, comp.AddInstructionBefore(std::move(back), bc));
  }
  if (bc->shape().element_type() == result_shape.element_type()) return OkStatus();
  Shape wide = bc->shape();
  bc->mutable_shape() = result_shape;
  const auto& order = comp.instructions();
  size_t at = 0;
  while (order[at].get() != bc) ++at;
  auto up = std::make_unique<hlo::HloInstruction>(HloOpcode::kConvert, wide,
                                                  comp.UniqueName(bc->name() + ".widen"));
  hlo::HloInstruction* next = at + 1 < order.size() ? order[at + 1].get() : nullptr;
  hlo::HloInstruction* widened =
      next ? comp.AddInstructionBefore(std::move(up), next) : comp.AddInstruction(std::move(up));
  bc->ReplaceAllUsesWith(widened);
  widened->AppendOperand(bc);
  if (comp.root_instruction() == bc) comp.set_root_instruction(widened);
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<hlo::HloModule>> WidenFloatsToF64(const hlo::HloModule& module) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> wide, hlo::CloneModule(module));
  struct Kept {
    hlo::HloComputation* comp;
    hlo::HloInstruction* inst;
    Shape operand, result;
  };
  std::vector<Kept> kept;
  for (const auto& comp : wide->computations()) {
    for (const auto& inst : comp->instructions()) {
      const HloOpcode op = inst->opcode();
      if (op == HloOpcode::kCustomCall) return Refuse(*inst, "a custom-call has no f64 form");
      if (op == HloOpcode::kBitcastConvert &&
          (HasFloatLeaf(inst->shape()) || HasFloatLeaf(inst->operand(0)->shape()))) {
        kept.push_back({comp.get(), inst.get(), inst->operand(0)->shape(), inst->shape()});
      }
    }
  }
  for (const auto& comp : wide->computations()) {
    for (const auto& inst : comp->instructions()) {
      // Constants keep their values (LiteralValues holds doubles): only the type widens.
      if (!WidenShape(inst->mutable_shape())) {
        return Refuse(*inst, "f8 and complex values are not widened");
      }
    }
  }
  for (const Kept& k : kept) {
    TPUSIM_RETURN_IF_ERROR(KeepBitcastConvertTypes(*k.comp, k.inst, k.operand, k.result));
  }
  return wide;
}

StatusOr<Literal> WidenLiteralToF64(const Literal& literal) {
  if (literal.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < literal.tuple_size(); ++i) {
      TPUSIM_ASSIGN_OR_RETURN(Literal e, WidenLiteralToF64(literal.element(i)));
      elements.push_back(std::move(e));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  // A copy either way (ConvertLiteral to its own type copies); f64 holds every value exactly.
  return hlo::ConvertLiteral(
      literal, Widens(literal.element_type()) ? PrimitiveType::kF64 : literal.element_type());
}

StatusOr<std::vector<std::vector<Literal>>> WidenArgumentsToF64(
    const std::vector<std::vector<Literal>>& args) {
  std::vector<std::vector<Literal>> wide;
  for (const std::vector<Literal>& device : args) {
    std::vector<Literal> widened;
    for (const Literal& a : device) {
      TPUSIM_ASSIGN_OR_RETURN(Literal w, WidenLiteralToF64(a));
      widened.push_back(std::move(w));
    }
    wide.push_back(std::move(widened));
  }
  return wide;
}

}  // namespace tpusim::driver
