#include "hlo/instruction.h"

#include <algorithm>

#include "common/check.h"
#include "hlo/computation.h"
#include "hlo/printer.h"

namespace tpusim::hlo {

void HloInstruction::set_name(std::string name) {
  if (parent_ != nullptr) parent_->OnRename(this, name);
  name_ = std::move(name);
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  auto& u = operand->users_;
  if (std::find(u.begin(), u.end(), this) == u.end()) u.push_back(this);
}

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_operand) {
  HloInstruction* old = operands_.at(static_cast<size_t>(i));
  operands_[static_cast<size_t>(i)] = new_operand;
  auto& nu = new_operand->users_;
  if (std::find(nu.begin(), nu.end(), this) == nu.end()) nu.push_back(this);
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) {
    auto& ou = old->users_;
    ou.erase(std::remove(ou.begin(), ou.end(), this), ou.end());
  }
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* other) {
  TPUSIM_CHECK(other != this) << "ReplaceAllUsesWith itself: " << name_;
  const std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == this) user->ReplaceOperandWith(i, other);
    }
  }
  if (parent_ != nullptr && parent_->root_instruction() == this) {
    parent_->set_root_instruction(other);
  }
}

void HloInstruction::DetachOperands() {
  for (HloInstruction* op : operands_) {
    auto& ou = op->users_;
    ou.erase(std::remove(ou.begin(), ou.end(), this), ou.end());
  }
  operands_.clear();
}

std::vector<HloComputation*> HloInstruction::called_computations() const {
  std::vector<HloComputation*> out;
  for (HloComputation* c : {to_apply_, while_condition_, while_body_, select_, scatter_}) {
    if (c != nullptr) out.push_back(c);
  }
  out.insert(out.end(), calls_.begin(), calls_.end());
  out.insert(out.end(), branches_.begin(), branches_.end());
  return out;
}

Precision HloInstruction::operand_precision(int64_t i) const {
  const auto& p = precision_config_.operand_precision;
  if (i < 0 || static_cast<size_t>(i) >= p.size()) return Precision::kDefault;
  return p[static_cast<size_t>(i)];
}

const std::string* HloInstruction::FindRawAttribute(std::string_view name) const {
  for (const auto& [k, v] : raw_attrs_) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string HloInstruction::ToString() const { return PrintInstruction(*this); }

}  // namespace tpusim::hlo
