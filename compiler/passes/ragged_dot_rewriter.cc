#include "compiler/passes/ragged_dot_rewriter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
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

// (starts, ends) [G] s32 of the groups of `sizes` [G] over `rows` rows. Each size is clamped to
// [0, rows] in its own type before it becomes s32 (an s64 2^63 - 1 or a u32 2^32 - 1 wrapped to
// -1, and two s32 2^31 - 1 summed to -2: the device's groups differed from the evaluator's, which
// clamps each group to the rows left); the caller keeps G x rows within s32.
std::pair<HloInstruction*, HloInstruction*> GroupBounds(hlo::HloModule& module,
                                                        MatrixBuilder& mb, HloInstruction* sizes,
                                                        int64_t rows) {
  HloBuilder& b = mb.builder();
  const int64_t g = sizes->shape().dimensions(0);
  const PrimitiveType t = sizes->shape().element_type();
  HloInstruction* s = b.Binary(HloOpcode::kMinimum, sizes,
                               mb.Full(t, static_cast<double>(rows), {g}), "sizes");
  if (t != PrimitiveType::kS32) s = b.Convert(s, PrimitiveType::kS32, "sizes");
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
  auto [starts, ends] =
      GroupBounds(module, mb, rd->operand(2), lhs->shape().dimensions(dims.lhs_ragged));
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
    const int64_t rows = rd->operand(0)->shape().dimensions(dims->lhs_ragged);
    const int64_t groups = rd->operand(2)->shape().dimensions(0);
    if (groups > 0 && rows > INT32_MAX / groups) {
      return Unimplemented(FormatDiagnostic(
          module.source_name(), "", rd->location(),
          fmt::format("%{} (ragged-dot): {} groups of up to {} rows: the group bounds are s32 "
                      "sums, and G x rows passes 2^31 - 1",
                      rd->name(), groups, rows)));
    }
    HloInstruction* dot = Rewrite(module, comp, rd, *dims);
    rd->ReplaceAllUsesWith(dot);
    comp.RemoveInstruction(rd);
    return true;
  });
}

}  // namespace tpusim::compiler
