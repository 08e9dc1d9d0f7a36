// Batched-matrix helpers for the linear-algebra expanders (cholesky_expander.h,
// triangular_solve_expander.h): every operand is [..., rows, cols] and the helpers act on its two
// minor dimensions, keeping the batch dimensions, as XLA's client matrix library does
// (SliceInMinorDims, UpdateSliceInMinorDims, BatchDot, TransposeInMinorDims).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {

class MatrixBuilder {
 public:
  /// New instructions go before `anchor` in `comp` (HloBuilder).
  MatrixBuilder(hlo::HloComputation* comp, const hlo::HloInstruction* anchor)
      : b_(comp, anchor) {}

  HloBuilder& builder() { return b_; }

  /// x[..., r0:r1, c0:c1].
  hlo::HloInstruction* SliceMinor(hlo::HloInstruction* x, int64_t r0, int64_t c0, int64_t r1,
                                  int64_t c1);
  /// x with x[..., r:r+u.rows, c:c+u.cols] = u (a dynamic-update-slice at constant offsets).
  hlo::HloInstruction* UpdateMinor(hlo::HloInstruction* x, hlo::HloInstruction* u, int64_t r,
                                   int64_t c);
  /// op(x) * op(y) over the batch dimensions, op = transpose of the minor dimensions when asked;
  /// HIGHEST precision (as XLA's expanders ask). [..., m, k] x [..., k, n] -> [..., m, n].
  hlo::HloInstruction* BatchDot(hlo::HloInstruction* x, bool tx, hlo::HloInstruction* y, bool ty);
  /// x with its two minor dimensions swapped.
  hlo::HloInstruction* TransposeMinor(hlo::HloInstruction* x);
  /// A [..., 1, 1] value `s` broadcast to `like`'s shape.
  hlo::HloInstruction* BroadcastScalarMatrix(hlo::HloInstruction* s,
                                             const hlo::HloInstruction* like);
  /// A constant of `type` broadcast to `dims`.
  hlo::HloInstruction* Full(hlo::PrimitiveType type, double value,
                            const std::vector<int64_t>& dims);
  /// s32 iota of `dims` along `dimension`, made once per (dims, dimension) and shared by every
  /// mask this builder makes.
  hlo::HloInstruction* Iota(const std::vector<int64_t>& dims, int64_t dimension);
  /// pred of `dims`: compare(row index, column index + offset, d) over the minor dimensions;
  /// TriangleMask(dims, GE, 0) is the lower triangle with the diagonal.
  hlo::HloInstruction* TriangleMask(const std::vector<int64_t>& dims, hlo::ComparisonDirection d,
                                    int64_t offset);
  /// isnan(x) as compare(x, x, NE).
  hlo::HloInstruction* IsNan(hlo::HloInstruction* x);

 private:
  HloBuilder b_;
  std::map<std::pair<std::vector<int64_t>, int64_t>, hlo::HloInstruction*> iotas_;
};

}  // namespace tpusim::compiler
