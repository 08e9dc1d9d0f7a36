#include "compiler/passes/lapack_custom_calls.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/linalg_options.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

bool IsLapackCall(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return false;
  for (const std::string& t : hlo::LapackTargets()) {
    if (inst.custom_call_target() == t) return true;
  }
  return false;
}

const char* Bool(bool b) { return b ? "true" : "false"; }

// InvalidArgument "file:line:col: message" at `inst`.
Status Located(const hlo::HloModule& module, const HloInstruction& inst, std::string_view message) {
  return InvalidArgument(fmt::format("{}:{}:{}: {}", module.source_name(), inst.location().line,
                                     inst.location().column, message));
}

// The HLO op of `call` on `cc`'s operands (cholesky or triangular-solve), attributes as the
// parser keeps them (hlo/linalg_options.h).
HloInstruction* LinalgOp(HloBuilder& b, const HloInstruction& cc, const hlo::LapackCall& call,
                         const Shape& shape) {
  const bool potrf = call.kind == hlo::LapackCall::Kind::kPotrf;
  auto op = std::make_unique<HloInstruction>(
      potrf ? HloOpcode::kCholesky : HloOpcode::kTriangularSolve, shape,
      b.UniqueName(cc.name() + (potrf ? ".cholesky" : ".triangular-solve")));
  for (HloInstruction* operand : cc.operands()) op->AppendOperand(operand);
  auto& attrs = op->mutable_raw_attributes();
  if (potrf) {
    attrs.emplace_back("lower", Bool(call.cholesky.lower));
  } else {
    const hlo::TriangularSolveOptions& o = call.solve;
    attrs.emplace_back("left_side", Bool(o.left_side));
    attrs.emplace_back("lower", Bool(o.lower));
    attrs.emplace_back("unit_diagonal", Bool(o.unit_diagonal));
    attrs.emplace_back("transpose_a",
                       o.transpose_a == hlo::TriangularSolveTranspose::kNoTranspose ? "NO_TRANSPOSE"
                       : o.transpose_a == hlo::TriangularSolveTranspose::kTranspose ? "TRANSPOSE"
                                                                                    : "ADJOINT");
  }
  return b.Add(std::move(op));
}

// info [batch...] s32: 1 where the matrix's factor holds a NaN, else 0.
HloInstruction* FactorInfo(hlo::HloModule& module, HloBuilder& b, HloInstruction* factor,
                           const Shape& info) {
  const int64_t rank = factor->shape().rank();
  HloInstruction* nan = b.Compare(factor, factor, hlo::ComparisonDirection::kNe, "isnan");
  HloInstruction* any =
      b.Reduce(nan, b.ScalarConstant(PrimitiveType::kPred, 0, "false"), {rank - 2, rank - 1},
               GetOrAddScalarBinary(module, PrimitiveType::kPred, HloOpcode::kOr), "failed");
  std::vector<int64_t> dims(static_cast<size_t>(info.rank()));
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
  HloInstruction* one =
      b.Broadcast(b.ScalarConstant(PrimitiveType::kS32, 1, "one"), info, {}, "ones");
  HloInstruction* zero =
      b.Broadcast(b.ScalarConstant(PrimitiveType::kS32, 0, "zero"), info, {}, "zeros");
  return b.Select(any, one, zero, "info");
}

}  // namespace

StatusOr<bool> LapackCustomCalls::Run(hlo::HloModule& module) {
  Status error = OkStatus();
  const bool changed = RewriteEach(module, IsLapackCall, [&](hlo::HloComputation& comp,
                                                             HloInstruction* cc) {
    if (!error.ok()) return;
    StatusOr<std::optional<hlo::LapackCall>> call =
        hlo::GetLapackCall(cc->custom_call_target(), cc->backend_config(), cc->name());
    if (!call.ok()) {
      error = Located(module, *cc, call.status().message());
      return;
    }
    HloBuilder b(&comp, cc);
    HloInstruction* result = nullptr;
    if ((*call)->kind == hlo::LapackCall::Kind::kTrsm) {
      result = LinalgOp(b, *cc, **call, cc->shape());
    } else {
      const Shape& s = cc->shape();
      if (!s.IsTuple() || s.tuple_shapes().size() != 2 || !s.tuple_shapes(0).IsArray() ||
          s.tuple_shapes(1).element_type() != PrimitiveType::kS32 || cc->operand_count() != 1) {
        error = Located(module, *cc,
                        "%" + cc->name() + ": custom-call " + cc->custom_call_target() +
                            " takes (a) and gives (factor, s32 info)");
        return;
      }
      HloInstruction* factor = LinalgOp(b, *cc, **call, s.tuple_shapes(0));
      result = b.Tuple({factor, FactorInfo(module, b, factor, s.tuple_shapes(1))}, "result");
    }
    cc->ReplaceAllUsesWith(result);
    comp.RemoveInstruction(cc);
  });
  TPUSIM_RETURN_IF_ERROR(error);
  return changed;
}

}  // namespace tpusim::compiler
