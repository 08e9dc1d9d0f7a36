#include "hlo/shape_inference_linalg.h"

#include <fmt/format.h>

#include "hlo/linalg_options.h"

namespace tpusim::hlo {
namespace {

Status Err(std::string message) { return InvalidArgument(std::move(message)); }

// A floating-point array of rank >= 2 whose last two dimensions are equal.
bool IsSquareBatch(const Shape& s) {
  return s.IsArray() && IsFloatingPoint(s.element_type()) && s.rank() >= 2 &&
         s.dimensions(s.rank() - 1) == s.dimensions(s.rank() - 2);
}

}  // namespace

StatusOr<Shape> InferCholesky(const HloInstruction& inst) {
  if (inst.operand_count() != 1) {
    return Err(fmt::format("expects 1 operand, has {}", inst.operand_count()));
  }
  const Shape& a = inst.operand(0)->shape();
  if (a.IsArray() && IsComplex(a.element_type()) && a.rank() >= 2 &&
      a.dimensions(a.rank() - 1) == a.dimensions(a.rank() - 2)) {
    // Valid in XLA (a Hermitian factorization; XLA's cholesky_expander test takes c64), but
    // neither the evaluator nor the TPU expansion (compiler/passes/cholesky_expander.h) has it.
    return Err(fmt::format("cholesky of a complex matrix ({}) is valid XLA but not modelled: "
                           "tpusim factors real floating-point matrices",
                           a.ToString(false)));
  }
  if (!IsSquareBatch(a)) {
    return Err(fmt::format("cholesky needs a floating-point [..., n, n] operand, got {}",
                           a.ToString(false)));
  }
  return Shape(a.element_type(), a.dimensions());
}

StatusOr<Shape> InferTriangularSolve(const HloInstruction& inst) {
  if (inst.operand_count() != 2) {
    return Err(fmt::format("expects 2 operands, has {}", inst.operand_count()));
  }
  TPUSIM_ASSIGN_OR_RETURN(const TriangularSolveOptions options, GetTriangularSolveOptions(inst));
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  bool ok = IsSquareBatch(a) && b.IsArray() && b.element_type() == a.element_type() &&
            b.rank() == a.rank();
  for (int64_t i = 0; ok && i + 2 < a.rank(); ++i) ok = a.dimensions(i) == b.dimensions(i);
  if (ok) {
    const int64_t k = b.dimensions(b.rank() - (options.left_side ? 2 : 1));
    ok = a.dimensions(a.rank() - 1) == k;
  }
  if (!ok) {
    return Err(fmt::format("triangular-solve of a {} and b {} (left_side={}): a must be "
                           "[..., k, k] of b's type and batch dimensions, k b's {} dimension",
                           a.ToString(false), b.ToString(false), options.left_side,
                           options.left_side ? "second-to-last" : "last"));
  }
  return Shape(b.element_type(), b.dimensions());
}

}  // namespace tpusim::hlo
