#include "compiler/passes/batched_gather_scatter_normalizer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

bool NarrowIndexType(PrimitiveType t) {
  return t == PrimitiveType::kS8 || t == PrimitiveType::kU8 || t == PrimitiveType::kS16 ||
         t == PrimitiveType::kU16;
}

// `indices` with an explicit index vector dimension `*ivd` holding its components and one more
// per batching dimension: an iota along each of `batch_dims` (dimensions of the indices).
// Updates *ivd when the index vector was implicit.
HloInstruction* AppendBatchIndices(HloBuilder& b, HloInstruction* indices, int64_t* ivd,
                                   const std::vector<int64_t>& batch_dims) {
  std::vector<int64_t> dims = indices->shape().dimensions();
  if (*ivd == static_cast<int64_t>(dims.size())) {
    dims.push_back(1);
    indices = b.Reshape(indices, dims, "index_vector");
  }
  if (NarrowIndexType(indices->shape().element_type())) {
    indices = b.Convert(indices, PrimitiveType::kS32, "s32");
  }
  const PrimitiveType type = indices->shape().element_type();
  std::vector<int64_t> one = dims;
  one[static_cast<size_t>(*ivd)] = 1;
  std::vector<HloInstruction*> parts = {indices};
  for (int64_t s : batch_dims) {
    auto iota = std::make_unique<HloInstruction>(HloOpcode::kIota, Shape(type, one),
                                                 b.UniqueName(indices->name() + ".batch_iota"));
    iota->set_iota_dimension(s);
    parts.push_back(b.Add(std::move(iota)));
  }
  return b.Concatenate(parts, *ivd, "batched");
}

std::vector<int64_t> SortedUnion(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  return a;
}

void NormalizeGather(hlo::HloComputation& comp, HloInstruction* g) {
  HloBuilder b(&comp, g);
  hlo::GatherDimensionNumbers& dn = g->mutable_gather_dimension_numbers();
  HloInstruction* indices =
      AppendBatchIndices(b, g->operand(1), &dn.index_vector_dim,
                         dn.start_indices_batching_dims);
  dn.start_index_map.insert(dn.start_index_map.end(), dn.operand_batching_dims.begin(),
                            dn.operand_batching_dims.end());
  dn.collapsed_slice_dims = SortedUnion(dn.collapsed_slice_dims, dn.operand_batching_dims);
  dn.operand_batching_dims.clear();
  dn.start_indices_batching_dims.clear();
  g->ReplaceOperandWith(1, indices);
}

void NormalizeScatter(hlo::HloComputation& comp, HloInstruction* s) {
  HloBuilder b(&comp, s);
  const int64_t n = (s->operand_count() - 1) / 2;  // operands..., indices, updates...
  hlo::ScatterDimensionNumbers& dn = s->mutable_scatter_dimension_numbers();
  HloInstruction* indices = AppendBatchIndices(b, s->operand(n), &dn.index_vector_dim,
                                               dn.scatter_indices_batching_dims);
  dn.scatter_dims_to_operand_dims.insert(dn.scatter_dims_to_operand_dims.end(),
                                         dn.input_batching_dims.begin(),
                                         dn.input_batching_dims.end());
  dn.inserted_window_dims = SortedUnion(dn.inserted_window_dims, dn.input_batching_dims);
  dn.input_batching_dims.clear();
  dn.scatter_indices_batching_dims.clear();
  s->ReplaceOperandWith(n, indices);
}

}  // namespace

StatusOr<bool> BatchedGatherScatterNormalizer::Run(hlo::HloModule& module) {
  return RewriteEach(
      module,
      [](const HloInstruction& i) {
        return (i.opcode() == HloOpcode::kGather &&
                !i.gather_dimension_numbers().operand_batching_dims.empty()) ||
               (i.opcode() == HloOpcode::kScatter &&
                !i.scatter_dimension_numbers().input_batching_dims.empty());
      },
      [](hlo::HloComputation& comp, HloInstruction* inst) {
        if (inst->opcode() == HloOpcode::kGather) {
          NormalizeGather(comp, inst);
        } else {
          NormalizeScatter(comp, inst);
        }
      });
}

}  // namespace tpusim::compiler
