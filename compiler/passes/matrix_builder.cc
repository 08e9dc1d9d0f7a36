#include "compiler/passes/matrix_builder.h"

#include <numeric>

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

HloInstruction* MatrixBuilder::SliceMinor(HloInstruction* x, int64_t r0, int64_t c0, int64_t r1,
                                          int64_t c1) {
  const int64_t rank = x->shape().rank();
  std::vector<int64_t> start(static_cast<size_t>(rank), 0), limit = x->shape().dimensions(),
                                                             step(static_cast<size_t>(rank), 1);
  start[static_cast<size_t>(rank - 2)] = r0;
  start[static_cast<size_t>(rank - 1)] = c0;
  limit[static_cast<size_t>(rank - 2)] = r1;
  limit[static_cast<size_t>(rank - 1)] = c1;
  return b_.Slice(x, start, limit, step, "slice");
}

HloInstruction* MatrixBuilder::UpdateMinor(HloInstruction* x, HloInstruction* u, int64_t r,
                                           int64_t c) {
  const int64_t rank = x->shape().rank();
  std::vector<HloInstruction*> starts;
  HloInstruction* zero = b_.ScalarConstant(hlo::PrimitiveType::kS32, 0, "zero");
  for (int64_t d = 0; d + 2 < rank; ++d) starts.push_back(zero);
  starts.push_back(b_.ScalarConstant(hlo::PrimitiveType::kS32, static_cast<double>(r), "row"));
  starts.push_back(b_.ScalarConstant(hlo::PrimitiveType::kS32, static_cast<double>(c), "col"));
  return b_.DynamicUpdateSlice(x, u, starts, "update");
}

HloInstruction* MatrixBuilder::BatchDot(HloInstruction* x, bool tx, HloInstruction* y, bool ty) {
  const int64_t rank = x->shape().rank();
  std::vector<int64_t> batch(static_cast<size_t>(rank - 2));
  std::iota(batch.begin(), batch.end(), 0);
  std::vector<int64_t> dims(x->shape().dimensions().begin(),
                            x->shape().dimensions().end() - 2);
  dims.push_back(x->shape().dimensions(tx ? rank - 1 : rank - 2));
  dims.push_back(y->shape().dimensions(ty ? rank - 2 : rank - 1));
  auto d = std::make_unique<HloInstruction>(HloOpcode::kDot,
                                            Shape(x->shape().element_type(), dims),
                                            b_.UniqueName("dot"));
  hlo::DotDimensionNumbers& dn = d->mutable_dot_dimension_numbers();
  dn.lhs_batch_dimensions = batch;
  dn.rhs_batch_dimensions = batch;
  dn.lhs_contracting_dimensions = {tx ? rank - 2 : rank - 1};
  dn.rhs_contracting_dimensions = {ty ? rank - 1 : rank - 2};
  d->mutable_precision_config().operand_precision = {hlo::Precision::kHighest,
                                                     hlo::Precision::kHighest};
  d->AppendOperand(x);
  d->AppendOperand(y);
  return b_.Add(std::move(d));
}

HloInstruction* MatrixBuilder::TransposeMinor(HloInstruction* x) {
  const int64_t rank = x->shape().rank();
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(rank - 2)], perm[static_cast<size_t>(rank - 1)]);
  return b_.Transpose(x, perm, "transpose");
}

HloInstruction* MatrixBuilder::BroadcastScalarMatrix(HloInstruction* s, const HloInstruction* like) {
  const std::vector<int64_t>& dims = s->shape().dimensions();
  std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  std::vector<int64_t> keep(batch.size());
  std::iota(keep.begin(), keep.end(), 0);
  HloInstruction* r = b_.Reshape(s, batch, "scalar");
  return b_.Broadcast(r, like->shape(), keep, "broadcast");
}

HloInstruction* MatrixBuilder::Full(hlo::PrimitiveType type, double value,
                                    const std::vector<int64_t>& dims) {
  return b_.Splat(Shape(type, dims), value, "constant", "full");
}

HloInstruction* MatrixBuilder::Iota(const std::vector<int64_t>& dims, int64_t dimension) {
  HloInstruction*& made = iotas_[{dims, dimension}];
  if (made != nullptr) return made;
  auto i = std::make_unique<HloInstruction>(
      HloOpcode::kIota, Shape(hlo::PrimitiveType::kS32, dims), b_.UniqueName("iota"));
  i->set_iota_dimension(dimension);
  made = b_.Add(std::move(i));
  return made;
}

HloInstruction* MatrixBuilder::TriangleMask(const std::vector<int64_t>& dims,
                                            hlo::ComparisonDirection d, int64_t offset) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  HloInstruction* row = Iota(dims, rank - 2);
  HloInstruction* col = Iota(dims, rank - 1);
  if (offset != 0) {
    col = b_.Binary(HloOpcode::kAdd, col, Full(hlo::PrimitiveType::kS32, offset, dims), "shift");
  }
  return b_.Compare(row, col, d, "mask");
}

HloInstruction* MatrixBuilder::IsNan(HloInstruction* x) {
  return b_.Compare(x, x, hlo::ComparisonDirection::kNe, "isnan");
}

}  // namespace tpusim::compiler
