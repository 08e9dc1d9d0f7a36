#include "compiler/passes/ragged_all_to_all_decomposer.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "hlo/sharding.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

Status Refuse(const hlo::HloModule& m, const HloInstruction& inst, const std::string& why) {
  return Unimplemented(FormatDiagnostic(
      m.source_name(), "", inst.location(),
      fmt::format("%{} (ragged-all-to-all): cannot lower: {}", inst.name(), why)));
}

// dims with dimension 0 replaced by `rows`.
std::vector<int64_t> WithRows(const Shape& s, int64_t rows) {
  std::vector<int64_t> d = s.dimensions();
  d[0] = rows;
  return d;
}

class Decomposer {
 public:
  Decomposer(hlo::HloModule& module, hlo::HloComputation* comp, HloInstruction* ra)
      : module_(module), ra_(ra), b_(comp, ra) {}

  StatusOr<HloInstruction*> Run() {
    if (ra_->operand_count() != 6) return Refuse(module_, *ra_, "it takes 6 operands");
    HloInstruction* input = ra_->operand(0);
    HloInstruction* output = ra_->operand(1);
    const int64_t devices = module_.replica_count() * module_.num_partitions();
    auto groups = hlo::ExpandReplicaGroups(ra_->replica_groups(), devices);
    if (!groups.ok() || groups->empty()) return Refuse(module_, *ra_, "bad replica groups");
    const int64_t n = static_cast<int64_t>((*groups)[0].size());
    for (const auto& g : *groups) {
      if (static_cast<int64_t>(g.size()) != n) {
        return Refuse(module_, *ra_, "replica groups of unequal sizes");
      }
    }
    for (int64_t k = 2; k < 6; ++k) {
      const Shape& s = ra_->operand(k)->shape();
      if (s.rank() != 1 || s.dimensions(0) != n) {
        return Refuse(module_, *ra_,
                      fmt::format("operand {} is not [{}] (one offset or size per member of its "
                                  "replica group; several updates per peer are not handled)",
                                  k, n));
      }
    }
    const Shape& in = input->shape();
    const Shape& out = output->shape();
    if (in.rank() == 0 || out.rank() == 0) return Refuse(module_, *ra_, "a scalar operand");
    const int64_t R = in.dimensions(0), Ro = out.dimensions(0);

    // Per peer k: the R rows from input_offsets[k] of [input; zeros].
    HloInstruction* zero = b_.ScalarConstant(in.element_type(), 0, "zero");
    HloInstruction* padded = b_.Concatenate(
        {input, b_.Broadcast(zero, Shape(in.element_type(), in.dimensions()), {}, "pad")}, 0,
        "padded");
    std::vector<int64_t> one_slot = WithRows(in, R);
    one_slot.insert(one_slot.begin(), 1);
    std::vector<HloInstruction*> slots;
    for (int64_t k = 0; k < n; ++k) {
      std::vector<HloInstruction*> starts{Element(ra_->operand(2), k)};
      for (int64_t d = 1; d < in.rank(); ++d) starts.push_back(Zero());
      HloInstruction* slot = b_.DynamicSlice(padded, starts, in.dimensions(), "slot");
      slots.push_back(b_.Reshape(slot, one_slot, "slot"));
    }
    HloInstruction* stacked = b_.Concatenate(slots, 0, "stacked");
    HloInstruction* received = AllToAll(stacked);
    HloInstruction* offsets = AllToAll(ra_->operand(4));  // [j] = member j's offset for me

    // For each sender j: rows [o_j, o_j + recv_sizes[j]) of the result are its slot, shifted.
    HloInstruction* result = output;
    const Shape rows_shape(PrimitiveType::kS32, out.dimensions());
    auto iota = std::make_unique<HloInstruction>(HloOpcode::kIota, rows_shape,
                                                 b_.UniqueName(ra_->name() + ".row"));
    iota->set_iota_dimension(0);
    HloInstruction* row = b_.Add(std::move(iota));
    HloInstruction* out_zeros =
        b_.Broadcast(b_.ScalarConstant(out.element_type(), 0, "zero"),
                     Shape(out.element_type(), out.dimensions()), {}, "pad");
    const int64_t slot_rows = std::min(R, Ro);
    for (int64_t j = 0; j < n; ++j) {
      std::vector<int64_t> start(static_cast<size_t>(in.rank()) + 1, 0), limit = one_slot,
                                                                           step(start.size(), 1);
      start[0] = j;
      limit[0] = j + 1;
      HloInstruction* slot = b_.Reshape(b_.Slice(received, start, limit, step, "from"),
                                        in.dimensions(), "from");
      std::vector<int64_t> s0(static_cast<size_t>(in.rank()), 0), l0 = WithRows(in, slot_rows),
                                                                   st(s0.size(), 1);
      slot = b_.Slice(slot, s0, l0, st, "from");
      // [zeros (Ro rows); slot; zeros]: rows Ro - o_j .. of it put the slot's row 0 at row o_j.
      HloInstruction* window =
          b_.Concatenate({out_zeros, slot, out_zeros}, 0, "window");
      HloInstruction* o = Element(offsets, j);
      HloInstruction* shift = b_.Binary(
          HloOpcode::kSubtract, b_.ScalarConstant(PrimitiveType::kS32, static_cast<double>(Ro),
                                                  "rows"), o, "shift");
      std::vector<HloInstruction*> starts{shift};
      for (int64_t d = 1; d < out.rank(); ++d) starts.push_back(Zero());
      HloInstruction* placed = b_.DynamicSlice(window, starts, out.dimensions(), "placed");
      HloInstruction* lo = b_.Broadcast(o, rows_shape, {}, "lo");
      HloInstruction* hi = b_.Broadcast(
          b_.Binary(HloOpcode::kAdd, o, Element(ra_->operand(5), j), "end"), rows_shape, {}, "hi");
      HloInstruction* in_range = b_.Binary(
          HloOpcode::kAnd, b_.Compare(row, lo, hlo::ComparisonDirection::kGe, "from_lo"),
          b_.Compare(row, hi, hlo::ComparisonDirection::kLt, "to_hi"), "mine");
      result = b_.Select(in_range, placed, result, "merged");
    }
    return result;
  }

 private:
  // x[k] of an integer [n] array, as an s32[] scalar.
  HloInstruction* Element(HloInstruction* x, int64_t k) {
    HloInstruction* e = b_.Reshape(b_.Slice(x, {k}, {k + 1}, {1}, "at"), {}, "at");
    if (e->shape().element_type() != PrimitiveType::kS32) {
      e = b_.Convert(e, PrimitiveType::kS32, "at");
    }
    return e;
  }
  HloInstruction* Zero() {
    if (zero_ == nullptr) zero_ = b_.ScalarConstant(PrimitiveType::kS32, 0, "start");
    return zero_;
  }
  // all-to-all of x along dimension 0 in the ragged-all-to-all's replica groups.
  HloInstruction* AllToAll(HloInstruction* x) {
    auto a = CloneInstructionAs(*ra_, HloOpcode::kAllToAll, x->shape(), {x},
                                b_.UniqueName(ra_->name() + ".all_to_all"));
    a->mutable_dimensions() = {0};
    a->set_has_dimensions(true);
    return b_.Add(std::move(a));
  }

  hlo::HloModule& module_;
  HloInstruction* ra_;
  HloBuilder b_;
  HloInstruction* zero_ = nullptr;
};

}  // namespace

StatusOr<bool> RaggedAllToAllDecomposer::Run(hlo::HloModule& module) {
  return RewriteEach(
      module, [](const HloInstruction& i) { return i.opcode() == HloOpcode::kRaggedAllToAll; },
      [&](hlo::HloComputation& comp, HloInstruction* ra) -> StatusOr<bool> {
        TPUSIM_ASSIGN_OR_RETURN(HloInstruction * r, Decomposer(module, &comp, ra).Run());
        ra->ReplaceAllUsesWith(r);
        comp.RemoveInstruction(ra);
        return true;
      });
}

}  // namespace tpusim::compiler
