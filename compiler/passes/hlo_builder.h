// Small helpers for passes that add instructions to a computation: each new instruction is placed
// before an anchor (keeping def-before-use order), gets a unique name derived from the anchor's,
// and inherits the anchor's source location and metadata so diagnostics and per-op reports still
// point at the user's instruction.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace tpusim::compiler {

class HloBuilder {
 public:
  /// New instructions go into `comp` just before `anchor`, named "<anchor name>.<suffix>".
  HloBuilder(hlo::HloComputation* comp, const hlo::HloInstruction* anchor)
      : comp_(comp), anchor_(anchor) {}

  hlo::HloInstruction* Add(std::unique_ptr<hlo::HloInstruction> inst);
  hlo::HloInstruction* ScalarConstant(hlo::PrimitiveType type, double value,
                                      const std::string& suffix);
  hlo::HloInstruction* Broadcast(hlo::HloInstruction* operand, const hlo::Shape& shape,
                                 std::vector<int64_t> dimensions, const std::string& suffix);
  /// broadcast(constant(value)) to `shape` (an array shape; the constant has its element type):
  /// the scalar is named "<anchor name>.<suffix>", the broadcast "<anchor name>.<broadcast_suffix>"
  /// (`suffix` again when empty). An integer element type takes `value` truncated toward zero,
  /// exact for |value| <= 2^53; SplatInt takes any int64.
  hlo::HloInstruction* Splat(const hlo::Shape& shape, double value, const std::string& suffix,
                             const std::string& broadcast_suffix = "");
  /// Splat of an integer element type with the exact int64 `value`.
  hlo::HloInstruction* SplatInt(const hlo::Shape& shape, int64_t value, const std::string& suffix,
                                const std::string& broadcast_suffix = "");
  hlo::HloInstruction* Unary(hlo::HloOpcode op, hlo::HloInstruction* x, const std::string& suffix);
  /// convert(x) to element type `type`, x's dimensions.
  hlo::HloInstruction* Convert(hlo::HloInstruction* x, hlo::PrimitiveType type,
                               const std::string& suffix);
  /// bitcast-convert(x) to element type `type` of the same bit width, x's dimensions.
  hlo::HloInstruction* BitcastConvert(hlo::HloInstruction* x, hlo::PrimitiveType type,
                                      const std::string& suffix);
  hlo::HloInstruction* Binary(hlo::HloOpcode op, hlo::HloInstruction* a, hlo::HloInstruction* b,
                              const std::string& suffix);
  /// compare(a, b), direction `d`: pred of a's dimensions.
  hlo::HloInstruction* Compare(hlo::HloInstruction* a, hlo::HloInstruction* b,
                               hlo::ComparisonDirection d, const std::string& suffix);
  /// select(p, on_true, on_false): on_true's shape.
  hlo::HloInstruction* Select(hlo::HloInstruction* p, hlo::HloInstruction* on_true,
                              hlo::HloInstruction* on_false, const std::string& suffix);
  /// reduce(x, init) over `dims` with `reducer`.
  hlo::HloInstruction* Reduce(hlo::HloInstruction* x, hlo::HloInstruction* init,
                              std::vector<int64_t> dims, hlo::HloComputation* reducer,
                              const std::string& suffix);
  hlo::HloInstruction* Tuple(const std::vector<hlo::HloInstruction*>& elements,
                             const std::string& suffix);
  /// pad(x, value) with `config` (edge low/high >= 0, interior >= 0 per dimension).
  hlo::HloInstruction* Pad(hlo::HloInstruction* x, hlo::HloInstruction* value,
                           const hlo::PaddingConfig& config, const std::string& suffix);
  /// slice(x) [start, limit) with `step` per dimension.
  hlo::HloInstruction* Slice(hlo::HloInstruction* x, const std::vector<int64_t>& start,
                             const std::vector<int64_t>& limit, const std::vector<int64_t>& step,
                             const std::string& suffix);

  /// transpose(x) by `perm` (result dimension i = x's dimension perm[i]).
  hlo::HloInstruction* Transpose(hlo::HloInstruction* x, const std::vector<int64_t>& perm,
                                 const std::string& suffix);
  /// reshape(x) to `dims` (same element count), x's element type.
  hlo::HloInstruction* Reshape(hlo::HloInstruction* x, const std::vector<int64_t>& dims,
                               const std::string& suffix);
  /// concatenate(parts) along `dim`.
  hlo::HloInstruction* Concatenate(const std::vector<hlo::HloInstruction*>& parts, int64_t dim,
                                   const std::string& suffix);
  /// dynamic-slice(x, starts...) of `sizes` (starts: s32[] scalars, one per dimension).
  hlo::HloInstruction* DynamicSlice(hlo::HloInstruction* x,
                                    const std::vector<hlo::HloInstruction*>& starts,
                                    const std::vector<int64_t>& sizes, const std::string& suffix);
  /// dynamic-update-slice(x, update, starts...).
  hlo::HloInstruction* DynamicUpdateSlice(hlo::HloInstruction* x, hlo::HloInstruction* update,
                                          const std::vector<hlo::HloInstruction*>& starts,
                                          const std::string& suffix);

  /// A name not yet used in the computation: `base`, else `base.1`, `base.2`, ...
  std::string UniqueName(const std::string& base) const;

 private:
  // `op`(x) with element type `type` and x's dimensions (convert, bitcast-convert).
  hlo::HloInstruction* Retype(hlo::HloOpcode op, hlo::HloInstruction* x, hlo::PrimitiveType type,
                              const std::string& suffix);

  hlo::HloComputation* comp_;
  const hlo::HloInstruction* anchor_;
};

/// The module's scalar `add` computation for `type` (created once, named "tpusim.add.<type>").
hlo::HloComputation* GetOrAddScalarAdd(hlo::HloModule& module, hlo::PrimitiveType type);
/// The module's scalar computation `op(x, y)` of `type` (a binary opcode: add, minimum, maximum,
/// ...), created once, named "tpusim.<opcode>.<type>".
hlo::HloComputation* GetOrAddScalarBinary(hlo::HloModule& module, hlo::PrimitiveType type,
                                          hlo::HloOpcode op);

/// A copy of `inst` (every attribute, shape, metadata, location, called computations) with
/// `operands` as its operands and `name` as its name. Not added to any computation.
std::unique_ptr<hlo::HloInstruction> CloneInstruction(
    const hlo::HloInstruction& inst, const std::vector<hlo::HloInstruction*>& operands,
    const std::string& name);

/// CloneInstruction with another opcode and shape (every attribute of `inst` kept): how an async
/// start/done pair becomes its synchronous op.
std::unique_ptr<hlo::HloInstruction> CloneInstructionAs(
    const hlo::HloInstruction& inst, hlo::HloOpcode opcode, const hlo::Shape& shape,
    const std::vector<hlo::HloInstruction*>& operands, const std::string& name);

/// Runs `rewrite(comp, inst)` on every instruction of every computation of `module` for which
/// `matches(inst)` holds (XLA's OpExpanderPass): each computation's matches are collected before
/// any is rewritten, and the computations before the first rewrite, so a rewrite may add
/// instructions and computations. `rewrite` returns void (every match is rewritten), bool (whether
/// it rewrote this one) or StatusOr<bool> (the same, or an error that stops the pass). Returns
/// whether anything was rewritten, or the first error.
template <typename Matches, typename Rewrite>
StatusOr<bool> RewriteEach(hlo::HloModule& module, Matches matches, Rewrite rewrite) {
  using Result = std::invoke_result_t<Rewrite&, hlo::HloComputation&, hlo::HloInstruction*>;
  std::vector<hlo::HloComputation*> comps;
  for (const auto& c : module.computations()) comps.push_back(c.get());
  bool changed = false;
  for (hlo::HloComputation* comp : comps) {
    std::vector<hlo::HloInstruction*> todo;
    for (const auto& i : comp->instructions()) {
      if (matches(*i)) todo.push_back(i.get());
    }
    for (hlo::HloInstruction* inst : todo) {
      if constexpr (std::is_void_v<Result>) {
        rewrite(*comp, inst);
        changed = true;
      } else if constexpr (std::is_same_v<Result, bool>) {
        changed = rewrite(*comp, inst) || changed;
      } else {
        TPUSIM_ASSIGN_OR_RETURN(bool rewritten, rewrite(*comp, inst));
        changed = rewritten || changed;
      }
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
