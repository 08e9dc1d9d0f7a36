#include "hlo/computation.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "common/check.h"
#include "hlo/module.h"
#include "hlo/printer.h"

namespace tpusim::hlo {

bool HloComputation::IsEntry() const {
  return parent_ != nullptr && parent_->entry_computation() == this;
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  TPUSIM_CHECK(instruction != nullptr);
  HloInstruction* raw = instruction.get();
  raw->set_parent(this);
  if (raw->opcode() == HloOpcode::kParameter) {
    const int64_t n = raw->parameter_number();
    TPUSIM_CHECK(n >= 0) << "negative parameter number";
    if (static_cast<size_t>(n) >= parameters_.size()) {
      parameters_.resize(static_cast<size_t>(n) + 1, nullptr);
    }
    parameters_[static_cast<size_t>(n)] = raw;
  }
  by_name_[raw->name()].push_back(raw);
  instructions_.push_back(std::move(instruction));
  return raw;
}

HloInstruction* HloComputation::AddInstructionBefore(std::unique_ptr<HloInstruction> instruction,
                                                     const HloInstruction* before) {
  // Searched from the end: passes insert before an instruction they are rewriting, usually late in
  // the order, many times over (while-lowering's unrolling), so this stays short.
  auto it = std::find_if(instructions_.rbegin(), instructions_.rend(),
                         [&](const auto& p) { return p.get() == before; });
  TPUSIM_CHECK(it != instructions_.rend()) << "AddInstructionBefore: anchor not in " << name_;
  const auto pos = instructions_.rend() - it - 1;
  HloInstruction* raw = AddInstruction(std::move(instruction));
  std::rotate(instructions_.begin() + pos, instructions_.end() - 1, instructions_.end());
  return raw;
}

void HloComputation::ReorderInstructions(const std::vector<const HloInstruction*>& order) {
  TPUSIM_CHECK(order.size() == instructions_.size()) << "ReorderInstructions: not a permutation";
  std::map<const HloInstruction*, size_t> pos;
  for (const HloInstruction* inst : order) pos.emplace(inst, pos.size());
  TPUSIM_CHECK(pos.size() == order.size()) << "ReorderInstructions: duplicates";
  std::vector<std::unique_ptr<HloInstruction>> sorted(instructions_.size());
  for (auto& up : instructions_) {
    auto it = pos.find(up.get());
    TPUSIM_CHECK(it != pos.end()) << "ReorderInstructions: " << up->name() << " missing";
    for (const HloInstruction* op : up->operands()) {
      TPUSIM_CHECK(pos.at(op) < it->second)
          << "ReorderInstructions: " << up->name() << " before its operand " << op->name();
    }
    sorted[it->second] = std::move(up);
  }
  instructions_ = std::move(sorted);
}

void HloComputation::RemoveInstruction(HloInstruction* instruction) {
  TPUSIM_CHECK(instruction->users().empty())
      << "RemoveInstruction: " << instruction->name() << " still has users";
  TPUSIM_CHECK(instruction != root_)
      << "RemoveInstruction: " << instruction->name() << " is the root";
  TPUSIM_CHECK(instruction->opcode() != HloOpcode::kParameter)
      << "RemoveInstruction: " << instruction->name() << " is a parameter";
  instruction->DetachOperands();
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  TPUSIM_CHECK(it != instructions_.end()) << "RemoveInstruction: not in " << name_;
  Unindex(instruction);
  instructions_.erase(it);
}

void HloComputation::RemoveInstructions(const std::vector<HloInstruction*>& dead) {
  std::unordered_set<const HloInstruction*> gone;
  for (HloInstruction* instruction : dead) {
    TPUSIM_CHECK(instruction->users().empty())
        << "RemoveInstructions: " << instruction->name() << " still has users";
    TPUSIM_CHECK(instruction != root_)
        << "RemoveInstructions: " << instruction->name() << " is the root";
    TPUSIM_CHECK(instruction->opcode() != HloOpcode::kParameter)
        << "RemoveInstructions: " << instruction->name() << " is a parameter";
    TPUSIM_CHECK(gone.insert(instruction).second)
        << "RemoveInstructions: " << instruction->name() << " given twice";
    instruction->DetachOperands();
  }
  size_t found = 0;
  for (const auto& p : instructions_) found += gone.count(p.get());
  TPUSIM_CHECK(found == gone.size()) << "RemoveInstructions: not all in " << name_;
  for (HloInstruction* instruction : dead) Unindex(instruction);
  std::erase_if(instructions_, [&](const auto& p) { return gone.count(p.get()) != 0; });
}

HloInstruction* HloComputation::FindInstruction(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second.front();
}

void HloComputation::Unindex(HloInstruction* instruction) {
  auto it = by_name_.find(instruction->name());
  TPUSIM_CHECK(it != by_name_.end()) << "name index: " << instruction->name() << " missing";
  std::vector<HloInstruction*>& same = it->second;
  auto at = std::find(same.begin(), same.end(), instruction);
  TPUSIM_CHECK(at != same.end()) << "name index: " << instruction->name() << " missing";
  same.erase(at);
  if (!same.empty()) return;
  by_name_.erase(it);
  // A freed name base.k lowers base's first possibly free suffix to k.
  const std::string& name = instruction->name();
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 >= name.size() || name[dot + 1] == '0' ||
      name.size() - dot - 1 > 18 ||
      !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dot) + 1, name.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return;
  }
  auto hint = first_free_suffix_.find(name.substr(0, dot));
  if (hint != first_free_suffix_.end()) {
    hint->second = std::min<int64_t>(hint->second, std::stoll(name.substr(dot + 1)));
  }
}

std::string HloComputation::UniqueName(const std::string& base) const {
  if (FindInstruction(base) == nullptr) return base;
  int64_t& k = first_free_suffix_.try_emplace(base, 1).first->second;
  while (FindInstruction(base + "." + std::to_string(k)) != nullptr) ++k;
  return base + "." + std::to_string(k);
}

void HloComputation::OnRename(HloInstruction* instruction, const std::string& new_name) {
  Unindex(instruction);
  by_name_[new_name].push_back(instruction);
}

std::string HloComputation::ToString() const { return PrintComputation(*this); }

}  // namespace tpusim::hlo
