#include "compiler/passes/sort_expander.h"

#include <limits>
#include <memory>
#include <vector>

#include "compiler/passes/elementwise_computation.h"
#include "compiler/passes/hlo_builder.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

constexpr int64_t kMaxSortLength = 65536;

// compare(p0, p1) LT or GT on f32 / bf16 / s32 keys: the network compares keys directly.
bool SimpleComparator(const HloInstruction& sort) {
  const HloInstruction* root = sort.to_apply()->root_instruction();
  if (root->opcode() != HloOpcode::kCompare ||
      (root->comparison_direction() != hlo::ComparisonDirection::kLt &&
       root->comparison_direction() != hlo::ComparisonDirection::kGt) ||
      root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter ||
      root->operand(0)->parameter_number() != 0 || root->operand(1)->parameter_number() != 1) {
    return false;
  }
  const PrimitiveType t = sort.operand(0)->shape().element_type();
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kS32;
}

// Any other comparator made of elementwise scalar ops over (lhs_0, rhs_0, lhs_1, rhs_1, ...):
// applied to whole arrays (elementwise_computation.h).
bool GeneralComparator(const HloInstruction& sort) {
  const hlo::HloComputation& c = *sort.to_apply();
  if (c.num_parameters() != 2 * sort.operand_count() || !IsElementwiseComputation(c) ||
      !c.root_instruction()->shape().IsArray() ||
      c.root_instruction()->shape().element_type() != PrimitiveType::kPred) {
    return false;
  }
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    if (c.parameter_instruction(i)->shape().element_type() !=
        sort.operand(i / 2)->shape().element_type()) {
      return false;
    }
  }
  return true;
}

bool Expandable(const HloInstruction& sort) {
  if (sort.opcode() != HloOpcode::kSort || sort.operand_count() < 1 || sort.to_apply() == nullptr) {
    return false;
  }
  const Shape& keys = sort.operand(0)->shape();
  if (!keys.IsArray() || !(SimpleComparator(sort) || GeneralComparator(sort))) return false;
  for (const HloInstruction* op : sort.operands()) {
    if (!op->shape().IsArray() || op->shape().dimensions() != keys.dimensions()) return false;
  }
  if (sort.dimensions().size() != 1) return false;
  const int64_t d = sort.dimensions()[0];
  if (d < 0 || d >= keys.rank()) return false;
  int64_t n = 1;
  while (n < keys.dimensions(d)) n *= 2;
  return n <= kMaxSortLength;
}

class Network {
 public:
  Network(hlo::HloComputation& comp, HloInstruction* sort) : b_(&comp, sort) {}

  HloInstruction* Reshape(HloInstruction* x, std::vector<int64_t> dims) {
    auto r = std::make_unique<HloInstruction>(HloOpcode::kReshape,
                                              Shape(x->shape().element_type(), dims),
                                              b_.UniqueName(Name("reshape")));
    r->AppendOperand(x);
    return b_.Add(std::move(r));
  }
  HloInstruction* Concatenate(HloInstruction* a, HloInstruction* c, int64_t dim) {
    std::vector<int64_t> dims = a->shape().dimensions();
    dims[static_cast<size_t>(dim)] += c->shape().dimensions(dim);
    auto r = std::make_unique<HloInstruction>(HloOpcode::kConcatenate,
                                              Shape(a->shape().element_type(), dims),
                                              b_.UniqueName(Name("concatenate")));
    r->mutable_dimensions() = {dim};
    r->set_has_dimensions(true);
    r->AppendOperand(a);
    r->AppendOperand(c);
    return b_.Add(std::move(r));
  }
  HloInstruction* Iota(std::vector<int64_t> dims, int64_t dim) {
    auto r = std::make_unique<HloInstruction>(HloOpcode::kIota, Shape(PrimitiveType::kS32, dims),
                                              b_.UniqueName(Name("position")));
    r->set_iota_dimension(dim);
    return b_.Add(std::move(r));
  }
  // pred[blocks] with block b ascending iff floor(b * 2j / k) is even, broadcast to `dims` along
  // dimension 1.
  HloInstruction* Ascending(int64_t blocks, int64_t j, int64_t k,
                            const std::vector<int64_t>& dims) {
    auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant,
                                              Shape(PrimitiveType::kPred, {blocks}),
                                              b_.UniqueName(Name("ascending")));
    for (int64_t blk = 0; blk < blocks; ++blk) {
      c->mutable_literal().int_values.push_back((blk * 2 * j / k) % 2 == 0 ? 1 : 0);
    }
    HloInstruction* v = b_.Add(std::move(c));
    return b_.Broadcast(v, Shape(PrimitiveType::kPred, dims), {1}, "ascending_blocks");
  }
  HloBuilder& b() { return b_; }

 private:
  static std::string Name(const char* what) { return std::string("sort.") + what; }
  HloBuilder b_;
};

Status Expand(hlo::HloComputation& comp, HloInstruction* sort) {
  Network net(comp, sort);
  HloBuilder& b = net.b();
  const Shape& keys_shape = sort->operand(0)->shape();
  const int64_t d = sort->dimensions()[0];
  const bool simple = SimpleComparator(*sort);
  const bool descending = simple && sort->to_apply()->root_instruction()->comparison_direction() ==
                                        hlo::ComparisonDirection::kGt;
  const hlo::ComparisonDirection before =
      descending ? hlo::ComparisonDirection::kGt : hlo::ComparisonDirection::kLt;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= keys_shape.dimensions(i);
  for (int64_t i = d + 1; i < keys_shape.rank(); ++i) inner *= keys_shape.dimensions(i);
  const int64_t n = keys_shape.dimensions(d);
  int64_t big = 1;
  while (big < n) big *= 2;

  // [outer, n, inner] views, padded to [outer, N, inner]: keys with a value that sorts last (the
  // padding's positions come after every real one, so ties with it keep real elements first).
  std::vector<HloInstruction*> arrays;  // keys, the other operands..., positions
  for (HloInstruction* op : sort->operands()) {
    HloInstruction* v = net.Reshape(op, {outer, n, inner});
    if (big > n) {
      hlo::PaddingConfig pc;
      pc.dimensions.resize(3);
      pc.dimensions[1].edge_padding_high = big - n;
      const PrimitiveType t = op->shape().element_type();
      double fill = 0;
      if (simple && op == sort->operand(0)) {
        if (t == PrimitiveType::kS32) {
          fill = descending ? std::numeric_limits<int32_t>::min()
                            : std::numeric_limits<int32_t>::max();
        } else {
          fill = descending ? -std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::infinity();
        }
      }
      v = b.Pad(v, b.ScalarConstant(t, fill, "sort_fill"), pc, "sort_pad");
    }
    arrays.push_back(v);
  }
  arrays.push_back(net.Iota({outer, big, inner}, 1));
  const size_t pos = arrays.size() - 1;

  for (int64_t k = 2; k <= big; k *= 2) {
    for (int64_t j = k / 2; j >= 1; j /= 2) {
      const int64_t blocks = big / (2 * j);
      std::vector<HloInstruction*> lo, hi;
      for (HloInstruction* a : arrays) {
        HloInstruction* v = net.Reshape(a, {outer, blocks, 2, j, inner});
        lo.push_back(net.Reshape(
            b.Slice(v, {0, 0, 0, 0, 0}, {outer, blocks, 1, j, inner}, {1, 1, 1, 1, 1}, "lo"),
            {outer, blocks, j, inner}));
        hi.push_back(net.Reshape(
            b.Slice(v, {0, 0, 1, 0, 0}, {outer, blocks, 2, j, inner}, {1, 1, 1, 1, 1}, "hi"),
            {outer, blocks, j, inner}));
      }
      const std::vector<int64_t> half_dims = {outer, blocks, j, inner};
      // first(x, y): x sorts before y (the comparator, then the original position).
      auto first = [&](size_t x, size_t y) -> StatusOr<HloInstruction*> {
        std::vector<HloInstruction*>& X = x == 0 ? lo : hi;
        std::vector<HloInstruction*>& Y = y == 0 ? lo : hi;
        HloInstruction* earlier =
            b.Compare(X[pos], Y[pos], hlo::ComparisonDirection::kLt, "earlier");
        if (simple) {
          HloInstruction* strictly = b.Compare(X[0], Y[0], before, "before");
          HloInstruction* tie = b.Compare(X[0], Y[0], hlo::ComparisonDirection::kEq, "tie");
          return b.Binary(HloOpcode::kOr, strictly, b.Binary(HloOpcode::kAnd, tie, earlier, "and"),
                          "first");
        }
        // General comparator: less(x, y), else a tie (neither less) broken by position; padding
        // (position >= n) sorts after every real element.
        std::vector<HloInstruction*> xy, yx;
        for (size_t i = 0; i < pos; ++i) {
          xy.insert(xy.end(), {X[i], Y[i]});
          yx.insert(yx.end(), {Y[i], X[i]});
        }
        TPUSIM_ASSIGN_OR_RETURN(auto less_xy,
                                ApplyElementwise(b, *sort->to_apply(), xy, half_dims));
        TPUSIM_ASSIGN_OR_RETURN(auto less_yx,
                                ApplyElementwise(b, *sort->to_apply(), yx, half_dims));
        HloInstruction* not_after = b.Unary(HloOpcode::kNot, less_yx[0], "not_after");
        HloInstruction* result =
            b.Binary(HloOpcode::kOr, less_xy[0],
                     b.Binary(HloOpcode::kAnd, not_after, earlier, "tie_earlier"), "first");
        if (big > n) {
          HloInstruction* limit =
              b.Broadcast(b.ScalarConstant(PrimitiveType::kS32, static_cast<double>(n), "n"),
                          Shape(PrimitiveType::kS32, half_dims), {}, "n_b");
          HloInstruction* x_real = b.Compare(X[pos], limit, hlo::ComparisonDirection::kLt, "real");
          HloInstruction* y_real = b.Compare(Y[pos], limit, hlo::ComparisonDirection::kLt, "real");
          // Both real: the comparator; else x first iff x is real (y then is padding).
          HloInstruction* both = b.Binary(HloOpcode::kAnd, x_real, y_real, "both_real");
          result = b.Select(both, result, x_real, "first_or_real");
        }
        return result;
      };
      HloInstruction* asc = net.Ascending(blocks, j, k, half_dims);
      // Swap when the pair is out of the block's order.
      TPUSIM_ASSIGN_OR_RETURN(HloInstruction * first_hi, first(1, 0));
      TPUSIM_ASSIGN_OR_RETURN(HloInstruction * first_lo, first(0, 1));
      HloInstruction* swap = b.Select(asc, first_hi, first_lo, "swap");
      for (size_t a = 0; a < arrays.size(); ++a) {
        HloInstruction* new_lo = b.Select(swap, hi[a], lo[a], "new_lo");
        HloInstruction* new_hi = b.Select(swap, lo[a], hi[a], "new_hi");
        HloInstruction* both =
            net.Concatenate(net.Reshape(new_lo, {outer, blocks, 1, j, inner}),
                            net.Reshape(new_hi, {outer, blocks, 1, j, inner}), 2);
        arrays[a] = net.Reshape(both, {outer, big, inner});
      }
    }
  }
  std::vector<HloInstruction*> results;
  for (size_t a = 0; a + 1 < arrays.size(); ++a) {
    HloInstruction* v = arrays[a];
    if (big > n) v = b.Slice(v, {0, 0, 0}, {outer, n, inner}, {1, 1, 1}, "sorted");
    results.push_back(net.Reshape(v, sort->operand(static_cast<int64_t>(a))->shape().dimensions()));
  }
  HloInstruction* out = sort->shape().IsTuple() ? b.Tuple(results, "sorted") : results[0];
  sort->ReplaceAllUsesWith(out);
  comp.RemoveInstruction(sort);
  return OkStatus();
}

}  // namespace

StatusOr<bool> SortExpander::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  std::vector<HloInstruction*> todo;
  for (const auto& i : entry->instructions()) {
    if (Expandable(*i)) todo.push_back(i.get());
  }
  for (HloInstruction* s : todo) TPUSIM_RETURN_IF_ERROR(Expand(*entry, s));
  return !todo.empty();
}

}  // namespace tpusim::compiler
