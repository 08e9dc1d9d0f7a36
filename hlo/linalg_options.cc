#include "hlo/linalg_options.h"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace tpusim::hlo {
namespace {

StatusOr<bool> BoolAttribute(const HloInstruction& inst, std::string_view name) {
  const std::string* v = inst.FindRawAttribute(name);
  if (v == nullptr) return false;
  if (*v == "true") return true;
  if (*v == "false") return false;
  return InvalidArgument(
      fmt::format("%{}: {}={} is not a bool (true or false)", inst.name(), name, *v));
}

}  // namespace

StatusOr<CholeskyOptions> GetCholeskyOptions(const HloInstruction& inst) {
  CholeskyOptions o;
  TPUSIM_ASSIGN_OR_RETURN(o.lower, BoolAttribute(inst, "lower"));
  return o;
}

StatusOr<TriangularSolveOptions> GetTriangularSolveOptions(const HloInstruction& inst) {
  TriangularSolveOptions o;
  TPUSIM_ASSIGN_OR_RETURN(o.left_side, BoolAttribute(inst, "left_side"));
  TPUSIM_ASSIGN_OR_RETURN(o.lower, BoolAttribute(inst, "lower"));
  TPUSIM_ASSIGN_OR_RETURN(o.unit_diagonal, BoolAttribute(inst, "unit_diagonal"));
  if (const std::string* t = inst.FindRawAttribute("transpose_a")) {
    if (*t == "NO_TRANSPOSE") {
      o.transpose_a = TriangularSolveTranspose::kNoTranspose;
    } else if (*t == "TRANSPOSE") {
      o.transpose_a = TriangularSolveTranspose::kTranspose;
    } else if (*t == "ADJOINT") {
      o.transpose_a = TriangularSolveTranspose::kAdjoint;
    } else {
      return InvalidArgument(fmt::format(
          "%{}: transpose_a={} is not one of NO_TRANSPOSE, TRANSPOSE, ADJOINT", inst.name(), *t));
    }
  }
  return o;
}

Status CheckLinalgShapes(const HloInstruction& inst) {
  auto square = [&](const Shape& s, const char* what) -> Status {
    if (!s.IsArray() || s.rank() < 2 || s.dimensions(s.rank() - 1) != s.dimensions(s.rank() - 2) ||
        !IsFloatingPoint(s.element_type())) {
      return InvalidArgument(fmt::format(
          "%{}: {} is {}; it must be floating point of shape [..., n, n] (batched square "
          "matrices)",
          inst.name(), what, s.ToString(false)));
    }
    return OkStatus();
  };
  if (inst.opcode() == HloOpcode::kCholesky) {
    if (inst.operand_count() != 1) {
      return InvalidArgument(fmt::format("%{}: cholesky takes 1 operand", inst.name()));
    }
    return square(inst.operand(0)->shape(), "the operand");
  }
  if (inst.operand_count() != 2) {
    return InvalidArgument(fmt::format("%{}: triangular-solve takes 2 operands", inst.name()));
  }
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  TPUSIM_RETURN_IF_ERROR(square(a, "a (operand 0)"));
  TPUSIM_ASSIGN_OR_RETURN(TriangularSolveOptions o, GetTriangularSolveOptions(inst));
  bool ok = b.IsArray() && b.rank() == a.rank() && b.element_type() == a.element_type();
  for (int64_t d = 0; ok && d + 2 < a.rank(); ++d) ok = a.dimensions(d) == b.dimensions(d);
  const int64_t k = a.dimensions(a.rank() - 1);
  ok = ok && b.dimensions(b.rank() - (o.left_side ? 2 : 1)) == k;
  if (!ok) {
    return InvalidArgument(fmt::format(
        "%{}: b (operand 1) is {}; with a {} and left_side={} it must be {}{} with a's batch "
        "dimensions",
        inst.name(), b.ToString(false), a.ToString(false), o.left_side,
        PrimitiveTypeName(a.element_type()),
        o.left_side ? fmt::format("[..., {}, n]", k) : fmt::format("[..., m, {}]", k)));
  }
  return OkStatus();
}

}  // namespace tpusim::hlo
