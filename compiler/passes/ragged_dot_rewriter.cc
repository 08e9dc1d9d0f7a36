#include "compiler/passes/ragged_dot_rewriter.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/matrix_builder.h"
#include "hlo/ragged_dot.h"

namespace tpusim::compiler {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

// (starts, ends) [G] s32 of the groups of `sizes` [G].
std::pair<HloInstruction*, HloInstruction*> GroupBounds(hlo::HloModule& module,
                                                        MatrixBuilder& mb, HloInstruction* sizes) {
  HloBuilder& b = mb.builder();
  const int64_t g = sizes->shape().dimensions(0);
  HloInstruction* s = sizes->shape().element_type() == PrimitiveType::kS32
                          ? sizes
                          : b.Convert(sizes, PrimitiveType::kS32, "sizes");
  s = b.Binary(HloOpcode::kMaximum, s, mb.Full(PrimitiveType::kS32, 0, {g}), "sizes");
  const std::vector<int64_t> gg = {g, g};
  HloInstruction* upto =
      b.Compare(mb.Iota(gg, 0), mb.Iota(gg, 1), ComparisonDirection::kLe, "upto");
  HloInstruction* spread = b.Broadcast(s, Shape(PrimitiveType::kS32, gg), {0}, "spread");
  HloInstruction* ends = b.Reduce(
      b.Select(upto, spread, mb.Full(PrimitiveType::kS32, 0, gg), "mine"),
      b.ScalarConstant(PrimitiveType::kS32, 0, "zero"), {0},
      GetOrAddScalarAdd(module, PrimitiveType::kS32), "ends");
  return {b.Binary(HloOpcode::kSubtract, ends, s, "starts"), ends};
}

HloInstruction* Rewrite(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* rd,
                        const hlo::RaggedDotDims& dims) {
  MatrixBuilder mb(&comp, rd);
  HloBuilder& b = mb.builder();
  HloInstruction* lhs = rd->operand(0);
  auto [starts, ends] = GroupBounds(module, mb, rd->operand(2));
  const int64_t g = rd->operand(2)->shape().dimensions(0);
  std::vector<int64_t> dense_dims = {g};
  const std::vector<int64_t>& ld = lhs->shape().dimensions();
  dense_dims.insert(dense_dims.end(), ld.begin(), ld.end());
  const Shape idx(PrimitiveType::kS32, dense_dims);
  HloInstruction* row = mb.Iota(dense_dims, dims.lhs_ragged + 1);
  HloInstruction* mask = b.Binary(
      HloOpcode::kAnd,
      b.Compare(b.Broadcast(starts, idx, {0}, "starts"), row, ComparisonDirection::kLe, "from"),
      b.Compare(row, b.Broadcast(ends, idx, {0}, "ends"), ComparisonDirection::kLt, "to"),
      "in_group");
  std::vector<int64_t> keep(ld.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = static_cast<int64_t>(i) + 1;
  const Shape dense_shape(lhs->shape().element_type(), dense_dims);
  HloInstruction* dense =
      b.Select(mask, b.Broadcast(lhs, dense_shape, keep, "lhs"),
               mb.Full(lhs->shape().element_type(), 0, dense_dims), "dense");
  std::unique_ptr<HloInstruction> dot =
      CloneInstructionAs(*rd, HloOpcode::kDot, rd->shape(), {dense, rd->operand(1)},
                         b.UniqueName(rd->name() + ".dense"));
  std::erase_if(dot->mutable_raw_attributes(), [](const auto& a) {
    return a.first == "lhs_ragged_dims" || a.first == "rhs_group_dims";
  });
  hlo::DotDimensionNumbers& d = dot->mutable_dot_dimension_numbers();
  for (int64_t& c : d.lhs_contracting_dimensions) ++c;
  d.lhs_contracting_dimensions.insert(d.lhs_contracting_dimensions.begin(), 0);
  d.rhs_contracting_dimensions.insert(d.rhs_contracting_dimensions.begin(), dims.rhs_group);
  return b.Add(std::move(dot));
}

}  // namespace

StatusOr<bool> RaggedDotRewriter::Run(hlo::HloModule& module) {
  auto matches = [](const HloInstruction& i) { return i.opcode() == HloOpcode::kRaggedDot; };
  return RewriteEach(module, matches, [&](hlo::HloComputation& comp,
                                          HloInstruction* rd) -> StatusOr<bool> {
    StatusOr<hlo::RaggedDotDims> dims = hlo::GetRaggedDotDims(*rd);
    if (!dims.ok()) {
      return Unimplemented(FormatDiagnostic(module.source_name(), "", rd->location(),
                                            std::string(dims.status().message())));
    }
    HloInstruction* dot = Rewrite(module, comp, rd, *dims);
    rd->ReplaceAllUsesWith(dot);
    comp.RemoveInstruction(rd);
    return true;
  });
}

}  // namespace tpusim::compiler
