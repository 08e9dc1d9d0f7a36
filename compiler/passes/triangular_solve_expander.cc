#include "compiler/passes/triangular_solve_expander.h"

#include <fmt/format.h>

#include <vector>

#include "common/diagnostic.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// b_row less a_chunk * b_chunk (left side) or b_chunk * a_chunk (right side), op(a_chunk) =
// a_chunk^T when transposed.
HloInstruction* LessSolved(MatrixBuilder& mb, HloInstruction* b_row, HloInstruction* a_chunk,
                           HloInstruction* b_chunk, bool left_side, bool transposed) {
  HloInstruction* solved = left_side ? mb.BatchDot(a_chunk, transposed, b_chunk, false)
                                     : mb.BatchDot(b_chunk, false, a_chunk, transposed);
  return mb.builder().Binary(HloOpcode::kSubtract, b_row, solved, "remainder");
}

}  // namespace

HloInstruction* BuildTriangularSolve(MatrixBuilder& mb, HloInstruction* a, HloInstruction* b,
                                     const hlo::TriangularSolveOptions& o) {
  const int64_t rank = b->shape().rank();
  const int64_t m = b->shape().dimensions(rank - 2), n = b->shape().dimensions(rank - 1);
  const int64_t k = a->shape().dimensions(rank - 1);
  const bool t = o.transposed();
  if (b->shape().ElementCount() == 0) return b;
  if (k == 1) {
    if (o.unit_diagonal) return b;
    return mb.builder().Binary(HloOpcode::kDivide, b, mb.BroadcastScalarMatrix(a, b), "divide");
  }
  // Forward (j = 0, 1, ...) when the matrix the rows are solved against is lower triangular.
  const bool forward = (t != o.lower) != !o.left_side;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = forward ? i : k - 1 - i;
    // Row j of b (left side) or column j (right side), and a's part of it off the diagonal that
    // multiplies the rows or columns already solved (0..j-1 forward, j+1..k-1 backward).
    int64_t r0 = j, c0 = forward ? 0 : j + 1, r1 = j + 1, c1 = forward ? j : k;
    if (t != !o.left_side) {
      std::swap(r0, c0);
      std::swap(r1, c1);
    }
    HloInstruction* b_row = o.left_side ? mb.SliceMinor(b, j, 0, j + 1, n)
                                        : mb.SliceMinor(b, 0, j, m, j + 1);
    if (i > 0) {  // the first step has nothing solved yet (and empty chunks are not emitted)
      HloInstruction* a_chunk = mb.SliceMinor(a, r0, c0, r1, c1);
      HloInstruction* b_chunk =
          o.left_side ? mb.SliceMinor(b, forward ? 0 : j + 1, 0, forward ? j : m, n)
                      : mb.SliceMinor(b, 0, forward ? 0 : j + 1, m, forward ? j : n);
      b_row = LessSolved(mb, b_row, a_chunk, b_chunk, o.left_side, t);
    }
    if (!o.unit_diagonal) {
      HloInstruction* diag = mb.SliceMinor(a, j, j, j + 1, j + 1);
      b_row = mb.builder().Binary(HloOpcode::kDivide, b_row, mb.BroadcastScalarMatrix(diag, b_row),
                                  "divide");
    }
    b = o.left_side ? mb.UpdateMinor(b, b_row, j, 0) : mb.UpdateMinor(b, b_row, 0, j);
  }
  return b;
}

StatusOr<bool> TriangularSolveExpander::Run(hlo::HloModule& module) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    std::vector<HloInstruction*> todo;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == HloOpcode::kTriangularSolve) todo.push_back(i.get());
    }
    for (HloInstruction* inst : todo) {
      Status st = hlo::CheckLinalgShapes(*inst);
      if (!st.ok()) {
        return LocatedError(module.source_name(), "", inst->location(), st.message());
      }
      if (!IsFloatingPoint(inst->shape().element_type())) continue;
      TPUSIM_ASSIGN_OR_RETURN(hlo::TriangularSolveOptions o,
                              hlo::GetTriangularSolveOptions(*inst));
      MatrixBuilder mb(comp.get(), inst);
      HloInstruction* x = BuildTriangularSolve(mb, inst->operand(0), inst->operand(1), o);
      inst->ReplaceAllUsesWith(x);
      comp->RemoveInstruction(inst);
      changed = true;
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
