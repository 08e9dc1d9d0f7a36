#include "compiler/passes/cholesky_expander.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/matrix_builder.h"
#include "compiler/passes/triangular_solve_expander.h"
#include "hlo/computation.h"
#include "hlo/linalg_options.h"
#include "hlo/module.h"

namespace tpusim::compiler {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// dims with its two minor dimensions set to 1: the shape of a per-matrix flag.
std::vector<int64_t> PerMatrix(std::vector<int64_t> dims) {
  dims[dims.size() - 1] = dims[dims.size() - 2] = 1;
  return dims;
}

// The lower factor of x [..., k, k] column by column (k steps), and a pred [..., 1, 1] that is
// true where a pivot was NaN. Step j: t = x - l * l^T; l += (t / sqrt(t[j, j])) on column j at and
// below the diagonal.
std::pair<HloInstruction*, HloInstruction*> FactorUnblocked(MatrixBuilder& mb,
                                                            HloInstruction* x) {
  HloBuilder& b = mb.builder();
  const std::vector<int64_t>& dims = x->shape().dimensions();
  const hlo::PrimitiveType type = x->shape().element_type();
  const int64_t k = dims.back();
  HloInstruction* zeros = mb.Full(type, 0, dims);
  HloInstruction* l = zeros;
  HloInstruction* error = mb.Full(hlo::PrimitiveType::kPred, 0, PerMatrix(dims));
  HloInstruction* lower = mb.TriangleMask(dims, ComparisonDirection::kGe, 0);
  HloInstruction* col = mb.Iota(dims, static_cast<int64_t>(dims.size()) - 1);
  for (int64_t j = 0; j < k; ++j) {
    HloInstruction* is_j = b.Compare(
        col, mb.Full(hlo::PrimitiveType::kS32, static_cast<double>(j), dims), ComparisonDirection::kEq,
        "column");
    HloInstruction* mask = b.Binary(HloOpcode::kAnd, lower, is_j, "mask");
    HloInstruction* t = b.Binary(HloOpcode::kSubtract, x, mb.BatchDot(l, false, l, true), "rest");
    HloInstruction* pivot = b.Unary(HloOpcode::kSqrt, mb.SliceMinor(t, j, j, j + 1, j + 1), "pivot");
    error = b.Binary(HloOpcode::kOr, error, mb.IsNan(pivot), "error");
    HloInstruction* scaled =
        b.Binary(HloOpcode::kDivide, t, mb.BroadcastScalarMatrix(pivot, t), "scaled");
    l = b.Binary(HloOpcode::kAdd, b.Select(mask, scaled, zeros, "masked"), l, "factor");
  }
  return {l, error};
}

// XLA's blocked left-looking factorization of a [..., n, n] (lower), NaN-filled per matrix on a
// NaN pivot.
HloInstruction* BuildCholesky(MatrixBuilder& mb, HloInstruction* a, int64_t block_size) {
  HloBuilder& b = mb.builder();
  const std::vector<int64_t>& dims = a->shape().dimensions();
  const hlo::PrimitiveType type = a->shape().element_type();
  const int64_t n = dims.back();
  HloInstruction* l = mb.Full(type, 0, dims);
  HloInstruction* error = mb.Full(hlo::PrimitiveType::kPred, 0, PerMatrix(dims));
  for (int64_t i = 0; i < n; i += block_size) {
    const int64_t k = std::min(block_size, n - i);
    HloInstruction* panel = mb.SliceMinor(a, i, i, n, i + k);
    if (i > 0) {
      HloInstruction* lhs = mb.SliceMinor(l, i, 0, n, i);
      HloInstruction* rhs = mb.SliceMinor(l, i, 0, i + k, i);
      panel = b.Binary(HloOpcode::kSubtract, panel, mb.BatchDot(lhs, false, rhs, true), "panel");
    }
    HloInstruction* x = mb.SliceMinor(panel, 0, 0, k, k);
    HloInstruction* factor;
    HloInstruction* factor_error;
    if (k == 1) {
      factor = b.Unary(HloOpcode::kSqrt, x, "pivot");
      factor_error = mb.IsNan(factor);
    } else {
      std::tie(factor, factor_error) = FactorUnblocked(mb, x);
    }
    error = b.Binary(HloOpcode::kOr, error, factor_error, "error");
    l = mb.UpdateMinor(l, factor, i, i);
    if (i + k < n) {
      hlo::TriangularSolveOptions o;
      o.left_side = false;
      o.lower = true;
      o.transpose_a = hlo::TriangularSolveTranspose::kAdjoint;
      HloInstruction* below =
          BuildTriangularSolve(mb, factor, mb.SliceMinor(panel, k, 0, n - i, k), o);
      l = mb.UpdateMinor(l, below, i + k, i);
    }
  }
  HloInstruction* nan = mb.Full(type, std::numeric_limits<double>::quiet_NaN(), dims);
  return b.Select(mb.BroadcastScalarMatrix(error, l), nan, l, "checked");
}

}  // namespace

StatusOr<bool> CholeskyExpander::Run(hlo::HloModule& module) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    std::vector<HloInstruction*> todo;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == HloOpcode::kCholesky) todo.push_back(i.get());
    }
    for (HloInstruction* inst : todo) {
      Status st = hlo::CheckLinalgShapes(*inst);
      StatusOr<hlo::CholeskyOptions> o = hlo::GetCholeskyOptions(*inst);
      if (st.ok() && !o.ok()) st = o.status();
      if (!st.ok()) {
        return LocatedError(module.source_name(), "", inst->location(), st.message());
      }
      MatrixBuilder mb(comp.get(), inst);
      HloInstruction* a = inst->operand(0);
      if (!o->lower) a = mb.TransposeMinor(a);
      HloInstruction* l = BuildCholesky(mb, a, std::max<int64_t>(1, block_size_));
      if (!o->lower) l = mb.TransposeMinor(l);
      inst->ReplaceAllUsesWith(l);
      comp->RemoveInstruction(inst);
      changed = true;
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
