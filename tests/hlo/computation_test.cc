// HloComputation's instruction list and its name index (FindInstruction): kept current by
// AddInstruction, AddInstructionBefore, RemoveInstruction(s) and HloInstruction::set_name.
#include "hlo/computation.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/shape.h"

namespace tpusim::hlo {
namespace {

std::unique_ptr<HloInstruction> Op(HloOpcode opcode, const std::string& name) {
  return std::make_unique<HloInstruction>(opcode, Shape(PrimitiveType::kF32, {4}), name);
}

std::string Names(const HloComputation& c) {
  std::string out;
  for (const auto& i : c.instructions()) out += (out.empty() ? "" : ",") + i->name();
  return out;
}

TEST(HloComputationTest, FindInstructionFollowsAddRemoveAndRename) {
  HloComputation c("main");
  auto p = Op(HloOpcode::kParameter, "p");
  p->set_parameter_number(0);
  HloInstruction* param = c.AddInstruction(std::move(p));
  auto n = Op(HloOpcode::kNegate, "n");
  n->AppendOperand(param);
  HloInstruction* neg = c.AddInstruction(std::move(n));
  auto a = Op(HloOpcode::kAbs, "a");
  a->AppendOperand(param);
  HloInstruction* abs = c.AddInstructionBefore(std::move(a), neg);
  c.set_root_instruction(neg);
  EXPECT_EQ(Names(c), "p,a,n");
  EXPECT_EQ(c.FindInstruction("p"), param);
  EXPECT_EQ(c.FindInstruction("a"), abs);
  EXPECT_EQ(c.FindInstruction("n"), neg);
  EXPECT_EQ(c.FindInstruction("nope"), nullptr);

  abs->set_name("a.renamed");
  EXPECT_EQ(c.FindInstruction("a"), nullptr);
  EXPECT_EQ(c.FindInstruction("a.renamed"), abs);

  c.RemoveInstruction(abs);
  EXPECT_EQ(c.FindInstruction("a.renamed"), nullptr);
  EXPECT_EQ(Names(c), "p,n");

  // A pass may give a new instruction the name of one it is about to remove (constant folding
  // keeps the folded instruction's name): both are found in turn, never a removed one.
  auto f = Op(HloOpcode::kAbs, "n.folded");
  f->AppendOperand(param);
  HloInstruction* folded = c.AddInstructionBefore(std::move(f), neg);
  c.set_root_instruction(folded);
  folded->set_name("n");
  EXPECT_EQ(c.FindInstruction("n"), neg);
  c.RemoveInstruction(neg);
  EXPECT_EQ(c.FindInstruction("n"), folded);
  EXPECT_EQ(c.FindInstruction("n.folded"), nullptr);
  EXPECT_EQ(Names(c), "p,n");
}

// A dead chain given users first is removed in one call; the others keep their order, the name
// index forgets the removed, and the survivors' user lists no longer name them.
TEST(HloComputationTest, RemoveInstructionsTakesADeadChainUsersFirst) {
  HloComputation c("main");
  auto p = Op(HloOpcode::kParameter, "p");
  p->set_parameter_number(0);
  HloInstruction* param = c.AddInstruction(std::move(p));
  HloInstruction* prev = param;
  std::vector<HloInstruction*> chain;
  for (int i = 0; i < 4; ++i) {
    auto n = Op(HloOpcode::kNegate, fmt::format("n{}", i));
    n->AppendOperand(prev);
    prev = c.AddInstruction(std::move(n));
    chain.push_back(prev);
  }
  auto a = Op(HloOpcode::kAbs, "a");
  a->AppendOperand(param);
  HloInstruction* abs = c.AddInstruction(std::move(a));
  c.set_root_instruction(abs);
  EXPECT_EQ(Names(c), "p,n0,n1,n2,n3,a");
  c.RemoveInstructions({chain[3], chain[2], chain[1], chain[0]});
  EXPECT_EQ(Names(c), "p,a");
  EXPECT_EQ(c.FindInstruction("n0"), nullptr);
  EXPECT_EQ(c.FindInstruction("a"), abs);
  ASSERT_EQ(param->users().size(), 1u);
  EXPECT_EQ(param->users()[0], abs);
}

TEST(HloComputationTest, ManyInsertionsBeforeOneAnchorKeepTheirOrder) {
  HloComputation c("main");
  auto p = Op(HloOpcode::kParameter, "p");
  p->set_parameter_number(0);
  HloInstruction* prev = c.AddInstruction(std::move(p));
  auto r = Op(HloOpcode::kNegate, "r");
  r->AppendOperand(prev);
  HloInstruction* root = c.AddInstruction(std::move(r));
  c.set_root_instruction(root);
  for (int i = 0; i < 1000; ++i) {
    auto n = Op(HloOpcode::kNegate, fmt::format("n{}", i));
    n->AppendOperand(prev);
    prev = c.AddInstructionBefore(std::move(n), root);
  }
  ASSERT_EQ(c.instruction_count(), 1002);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(c.instructions()[static_cast<size_t>(i) + 1]->name(), fmt::format("n{}", i));
    EXPECT_EQ(c.FindInstruction(fmt::format("n{}", i)), c.instructions()[static_cast<size_t>(i) + 1].get());
  }
  EXPECT_EQ(c.instructions().back().get(), root);
}

}  // namespace
}  // namespace tpusim::hlo
