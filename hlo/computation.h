// HloComputation: a named list of instructions with parameters and a root
// (xla/hlo/ir/hlo_computation.h). Owns its instructions; instructions are kept in text order, which
// is a valid def-before-use order (the parser rejects uses before definitions and cycles).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/diagnostic.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  /// Name without `%`.
  const std::string& name() const { return name_; }
  /// Renames the computation (the SPMD partitioner marks its result "<name>_spmd", as XLA does).
  void set_name(std::string name) { name_ = std::move(name); }
  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* m) { parent_ = m; }
  bool IsEntry() const;

  /// Takes ownership, sets the instruction's parent, registers a parameter at its parameter_number.
  /// Returns the raw pointer.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);

  /// AddInstruction, but placed just before `before` in the instruction order (so a pass can insert
  /// producers of `before` and keep the def-before-use order). Added by the lowering helper.
  HloInstruction* AddInstructionBefore(std::unique_ptr<HloInstruction> instruction,
                                       const HloInstruction* before);
  /// Puts the instructions in `order`, which must hold each of them once and define every operand
  /// before its users (checked: a pass that reorders must keep def-before-use).
  void ReorderInstructions(const std::vector<const HloInstruction*>& order);
  /// Removes `instruction`, which must have no users and not be the root or a parameter (checked).
  /// Linear in the instruction count: a pass removing many instructions uses RemoveInstructions.
  void RemoveInstruction(HloInstruction* instruction);
  /// Removes every instruction of `dead`, in one pass over the computation (linear time). Each is
  /// detached from its operands in list order, so a chain can be given users first (reverse
  /// def-before-use order); when detached, each must have no users left and not be the root or a
  /// parameter (checked). The remaining instructions keep their order.
  void RemoveInstructions(const std::vector<HloInstruction*>& dead);

  /// Instructions in text (def-before-use) order.
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  /// Parameters indexed by parameter number (parameter_instruction(i) has parameter(i)); entries
  /// are non-null once the computation is complete (the parser checks the numbers are 0..N-1).
  const std::vector<HloInstruction*>& parameter_instructions() const { return parameters_; }
  HloInstruction* parameter_instruction(int64_t i) const {
    return parameters_[static_cast<size_t>(i)];
  }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* root) { root_ = root; }
  /// The instruction named `name` (without `%`), or nullptr. Constant time (a name index kept by
  /// AddInstruction, RemoveInstruction and HloInstruction::set_name), so passes that pick unique
  /// names for many new instructions (while-lowering's unrolling) stay linear.
  HloInstruction* FindInstruction(std::string_view name) const;
  /// Called by HloInstruction::set_name before `instruction` of this computation takes `new_name`.
  void OnRename(HloInstruction* instruction, const std::string& new_name);
  /// A name no instruction of this computation has: `base` if free, else the first free of
  /// base.1, base.2, ... Amortized constant time: the first suffix that may be free is kept per
  /// base (all below it are taken) and lowered when a name base.k is freed, so unrolling N copies
  /// of a loop body is linear in N, not quadratic.
  std::string UniqueName(const std::string& base) const;

  /// Where the computation's name is in the text.
  SourceLocation location() const { return location_; }
  void set_location(SourceLocation loc) { location_ = loc; }
  /// `, execution_thread="..."` after the body, if written.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  /// HLO text of the computation, with signature.
  std::string ToString() const;

 private:
  // Drops `instruction` from by_name_.
  void Unindex(HloInstruction* instruction);

  std::string name_;
  HloModule* parent_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  // Name -> instructions of that name (several only while a pass renames; FindInstruction returns
  // the first added).
  std::unordered_map<std::string, std::vector<HloInstruction*>> by_name_;
  // Per base name: every base.1 .. base.(k-1) is taken (UniqueName).
  mutable std::unordered_map<std::string, int64_t> first_free_suffix_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  SourceLocation location_;
  std::string execution_thread_;
};

}  // namespace tpusim::hlo
