#include "hlo/verifier.h"

#include <fmt/format.h>

#include <limits>

#include "common/diagnostic.h"
#include "hlo/custom_call_check.h"
#include "hlo/shape_inference.h"
#include "hlo/verify_devices.h"

namespace tpusim::hlo {
namespace {

// Same tuple structure and dimensions; array element types equal, or both floating point
// (XLA's ShapeUtil::CompatibleIgnoringFpPrecision).
bool CompatibleIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!CompatibleIgnoringFpPrecision(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (a.element_type() != b.element_type() &&
      !(IsFloatingPoint(a.element_type()) && IsFloatingPoint(b.element_type()))) {
    return false;
  }
  return a.dimensions() == b.dimensions();
}

class Verifier {
 public:
  Verifier(const HloModule& module, std::string_view source)
      : module_(module), source_(source), allow_mixed_precision_(IsOptimizedDump(module)) {}

  Status Run() {
    for (const auto& comp : module_.computations()) {
      if (comp->root_instruction() == nullptr) {
        return LocatedError(module_.source_name(), source_, comp->location(),
                            fmt::format("computation '%{}' has no root", comp->name()));
      }
      for (const auto& inst : comp->instructions())
        TPUSIM_RETURN_IF_ERROR(VerifyInstruction(*inst));
    }
    return VerifyDeviceIds(module_, source_);
  }

 private:
  Status Error(const HloInstruction& inst, std::string_view message) const {
    return LocatedError(
        module_.source_name(), source_, inst.location(),
        fmt::format("'%{}' ({}): {}", inst.name(), HloOpcodeString(inst.opcode()), message));
  }

  Status VerifyInstruction(const HloInstruction& inst) {
    // As XLA's ShapeUtil::ValidateShapeSize: an array whose byte size does not fit int64 cannot be
    // allocated, planned or costed (Shape::ByteSize saturates at INT64_MAX).
    for (const Shape* leaf : inst.shape().Leaves()) {
      if (leaf->IsArray() && leaf->ByteSize() == std::numeric_limits<int64_t>::max()) {
        return Error(inst, fmt::format("shape {} is too large: its size in bytes overflows int64",
                                       leaf->ToString(false)));
      }
    }
    StatusOr<std::optional<Shape>> inferred = InferShape(inst);
    if (!inferred.ok()) return Error(inst, inferred.status().message());
    if (Status s = CheckKnownCustomCall(inst); !s.ok()) return Error(inst, s.message());
    const bool compatible =
        !inferred->has_value() || (*inferred)->Compatible(inst.shape()) ||
        (allow_mixed_precision_ && CompatibleIgnoringFpPrecision(**inferred, inst.shape()));
    if (!compatible) {
      return Error(inst, fmt::format("shape mismatch: the operands give {} but the instruction is "
                                     "written as {}",
                                     (*inferred)->ToString(false), inst.shape().ToString(false)));
    }
    return VerifyCalls(inst);
  }

  // Callee signatures against the call site.
  Status CheckParams(const HloInstruction& inst, const HloComputation* c,
                     const std::vector<const Shape*>& args, std::string_view role) const {
    if (c == nullptr) return OkStatus();
    if (c->num_parameters() != static_cast<int64_t>(args.size())) {
      return Error(inst, fmt::format("{} '%{}' takes {} parameters, {} are passed", role, c->name(),
                                     c->num_parameters(), args.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const Shape& p = c->parameter_instruction(static_cast<int64_t>(i))->shape();
      if (!p.Compatible(*args[i])) {
        return Error(inst, fmt::format("{} '%{}' parameter {} is {} but {} is passed", role,
                                       c->name(), i, p.ToString(false), args[i]->ToString(false)));
      }
    }
    return OkStatus();
  }

  Status VerifyCalls(const HloInstruction& inst) const {
    std::vector<const Shape*> operands;
    for (const HloInstruction* o : inst.operands()) operands.push_back(&o->shape());
    switch (inst.opcode()) {
      case HloOpcode::kWhile: {
        if (inst.operand_count() != 1) return OkStatus();  // reported by inference
        TPUSIM_RETURN_IF_ERROR(CheckParams(inst, inst.while_body(), operands, "body"));
        TPUSIM_RETURN_IF_ERROR(CheckParams(inst, inst.while_condition(), operands, "condition"));
        const HloComputation* cond = inst.while_condition();
        if (cond != nullptr &&
            !cond->root_instruction()->shape().Compatible(Shape::Scalar(PrimitiveType::kPred))) {
          return Error(inst, fmt::format("condition '%{}' returns {}, not pred[]", cond->name(),
                                         cond->root_instruction()->shape().ToString(false)));
        }
        if (!inst.operand(0)->shape().Compatible(inst.shape())) {
          return Error(inst, "the loop state (operand) and the result must have the same shape");
        }
        return OkStatus();
      }
      case HloOpcode::kCall:
        return CheckParams(inst, inst.to_apply() ? inst.to_apply() : inst.called_computation(),
                           operands, "callee");
      case HloOpcode::kFusion:
        return CheckParams(inst, inst.called_computation(), operands, "fused computation");
      case HloOpcode::kConditional: {
        const auto& branches = inst.branch_computations();
        if (static_cast<int64_t>(branches.size()) + 1 != inst.operand_count()) {
          return Error(inst,
                       fmt::format("{} branches need {} operands, there are {}", branches.size(),
                                   branches.size() + 1, inst.operand_count()));
        }
        for (size_t b = 0; b < branches.size(); ++b) {
          TPUSIM_RETURN_IF_ERROR(CheckParams(
              inst, branches[b], {&inst.operand(static_cast<int64_t>(b) + 1)->shape()}, "branch"));
          if (branches[b] && !branches[b]->root_instruction()->shape().Compatible(inst.shape())) {
            return Error(inst, fmt::format("branch '%{}' returns {}, the conditional {}",
                                           branches[b]->name(),
                                           branches[b]->root_instruction()->shape().ToString(false),
                                           inst.shape().ToString(false)));
          }
        }
        return OkStatus();
      }
      case HloOpcode::kReduce:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kReduceScatter:
      case HloOpcode::kCollectiveReduce:
      case HloOpcode::kScatter: {
        // A reducer of N values takes 2N scalars.
        const HloComputation* c = inst.to_apply();
        if (c == nullptr) return OkStatus();
        int64_t n = 1;
        if (inst.opcode() == HloOpcode::kReduce || inst.opcode() == HloOpcode::kReduceWindow) {
          n = inst.operand_count() / 2;
        } else if (inst.opcode() == HloOpcode::kScatter) {
          n = (inst.operand_count() - 1) / 2;
        }
        if (inst.opcode() == HloOpcode::kAllReduce || inst.opcode() == HloOpcode::kAllReduceStart ||
            inst.opcode() == HloOpcode::kReduceScatter ||
            inst.opcode() == HloOpcode::kCollectiveReduce) {
          n = 1;  // the reducer is applied per element of each operand
        }
        if (c->num_parameters() != 2 * n) {
          return Error(inst, fmt::format("reducer '%{}' takes {} parameters, {} expected",
                                         c->name(), c->num_parameters(), 2 * n));
        }
        return OkStatus();
      }
      case HloOpcode::kScan: {
        // to_apply takes one slice of each input and each carry: one parameter per operand
        // (XLA's ScanExpander calls it with the sliced inputs, then the carries).
        const HloComputation* c = inst.to_apply();
        if (c == nullptr) return Error(inst, "scan needs to_apply=");
        if (c->num_parameters() != inst.operand_count()) {
          return Error(inst, fmt::format("to_apply '%{}' takes {} parameters; a scan of {} "
                                         "operands (inputs and initial carries) passes {}",
                                         c->name(), c->num_parameters(), inst.operand_count(),
                                         inst.operand_count()));
        }
        return OkStatus();
      }
      case HloOpcode::kMap: {
        // to_apply takes one scalar per operand (XLA's InferMapShape: "Map applied function
        // arity must match number of arguments").
        const HloComputation* c = inst.to_apply();
        if (c == nullptr) return Error(inst, "map needs to_apply=");
        if (c->num_parameters() != inst.operand_count()) {
          return Error(inst, fmt::format("to_apply '%{}' takes {} parameters; a map of {} "
                                         "operands passes {}",
                                         c->name(), c->num_parameters(), inst.operand_count(),
                                         inst.operand_count()));
        }
        return OkStatus();
      }
      case HloOpcode::kScaledDot:
        if (inst.operand_count() != 4) {
          return Error(inst, fmt::format("scaled-dot takes 4 operands (lhs, rhs, lhs_scale, "
                                         "rhs_scale), got {}",
                                         inst.operand_count()));
        }
        return OkStatus();
      case HloOpcode::kShuffle:
        if (inst.operand_count() != 1) {
          return Error(inst, fmt::format("shuffle takes 1 operand, got {}", inst.operand_count()));
        }
        return OkStatus();
      default:
        return OkStatus();
    }
  }

  const HloModule& module_;
  std::string_view source_;
  // XLA runs its verifier with HloVerifierOpts::allow_mixed_precision in the pipelines that run
  // after float normalization (the TPU and GPU backends fold converts into their users, so an
  // optimized dump may write `bf16[..] gather(f32[..] x, ...)`). tpusim applies it to modules that
  // are dumps after optimization (IsOptimizedDump).
  bool allow_mixed_precision_;
};

}  // namespace

bool IsOptimizedDump(const HloModule& module) {
  if (module.is_scheduled()) return true;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == HloOpcode::kFusion) return true;
    }
  }
  return false;
}

Status VerifyModule(const HloModule& module, std::string_view source_text) {
  return Verifier(module, source_text).Run();
}

std::vector<const HloInstruction*> InstructionsWithoutShapeInference(const HloModule& module) {
  std::vector<const HloInstruction*> out;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      StatusOr<std::optional<Shape>> s = InferShape(*inst);
      if (s.ok() && !s->has_value()) out.push_back(inst.get());
    }
  }
  return out;
}

}  // namespace tpusim::hlo
