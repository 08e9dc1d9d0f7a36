#include "compiler/passes/variadic_reduce_expander.h"

#include <algorithm>
#include <vector>

#include "compiler/passes/elementwise_computation.h"
#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

bool Expandable(const HloInstruction& r) {
  if (r.opcode() != HloOpcode::kReduce || !r.shape().IsTuple() || r.to_apply() == nullptr) {
    return false;
  }
  const int64_t k = r.operand_count() / 2;
  if (k < 1 || r.operand_count() != 2 * k) return false;
  const Shape& x0 = r.operand(0)->shape();
  for (int64_t i = 0; i < k; ++i) {
    if (!r.operand(i)->shape().IsArray() || r.operand(i)->shape().dimensions() != x0.dimensions()) {
      return false;
    }
  }
  for (int64_t d : r.dimensions()) {
    if (d < 0 || d >= x0.rank()) return false;
  }
  return IsElementwiseComputation(*r.to_apply());
}

StatusOr<bool> Expand(hlo::HloComputation& comp, HloInstruction* r) {
  HloBuilder b(&comp, r);
  const int64_t k = r->operand_count() / 2;
  const Shape& xs = r->operand(0)->shape();
  std::vector<int64_t> kept, perm;
  int64_t big_k = 1, n = 1;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    const auto& rd = r->dimensions();
    if (std::find(rd.begin(), rd.end(), d) == rd.end()) {
      perm.push_back(d);
      kept.push_back(xs.dimensions(d));
      big_k *= xs.dimensions(d);
    }
  }
  for (int64_t d : r->dimensions()) {
    perm.push_back(d);
    n *= xs.dimensions(d);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  std::vector<HloInstruction*> acc;
  for (int64_t i = 0; i < k; ++i) {
    HloInstruction* x = r->operand(i);
    if (!identity) x = b.Transpose(x, perm, "reduce_order");
    acc.push_back(b.Reshape(x, {big_k, n}, "rows"));
  }
  hlo::HloComputation& f = *r->to_apply();
  while (n > 1) {
    const int64_t half = n / 2;
    std::vector<HloInstruction*> args;
    for (HloInstruction* a : acc) args.push_back(b.Slice(a, {0, 0}, {big_k, half}, {1, 1}, "lo"));
    for (HloInstruction* a : acc) {
      args.push_back(b.Slice(a, {0, half}, {big_k, 2 * half}, {1, 1}, "hi"));
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<HloInstruction*> combined,
                            ApplyElementwise(b, f, args, {big_k, half}));
    if (n % 2 == 1) {
      for (int64_t i = 0; i < k; ++i) {
        HloInstruction* last = b.Slice(acc[static_cast<size_t>(i)], {0, n - 1}, {big_k, n},
                                       {1, 1}, "carry");
        combined[static_cast<size_t>(i)] =
            b.Concatenate({combined[static_cast<size_t>(i)], last}, 1, "carried");
      }
    }
    acc = std::move(combined);
    n = half + n % 2;
  }
  // n == 1 (or 0: an empty reduction is the init values).
  std::vector<HloInstruction*> args;
  for (int64_t i = 0; i < k; ++i) {
    HloInstruction* init = r->operand(k + i);
    args.push_back(b.Broadcast(init, Shape(init->shape().element_type(), {big_k, 1}), {}, "init"));
  }
  std::vector<HloInstruction*> results;
  if (n == 0) {
    results = args;
  } else {
    args.insert(args.end(), acc.begin(), acc.end());
    TPUSIM_ASSIGN_OR_RETURN(results, ApplyElementwise(b, f, args, {big_k, 1}));
  }
  for (HloInstruction*& v : results) v = b.Reshape(v, kept, "result");
  HloInstruction* tuple = b.Tuple(results, "results");
  r->ReplaceAllUsesWith(tuple);
  comp.RemoveInstruction(r);
  return true;
}

}  // namespace

StatusOr<bool> VariadicReduceExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, Expand);
}

}  // namespace tpusim::compiler
