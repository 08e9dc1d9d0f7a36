// isa/program.h: CoreList (cores that share one copy of their code read the same instructions,
// writing one core gives it a copy of its own and leaves the others as they were, and equality is
// of the code, shared or not), CoreProgram::Append and Program::AddHloName (moved from
// encoding_test.cc), and Hash. Was core_list_test.cc.
#include "isa/program.h"

#include <gtest/gtest.h>

#include "isa/encoding.h"
#include "isa/instruction.h"

namespace tpusim::isa {
namespace {

Instruction Loop(uint64_t count) { return op::CtrlLoop{.count = count}.ToInstruction(); }

CoreList ThreeCores() {
  CoreList cores;
  cores.resize(3);
  for (size_t c = 0; c < 3; ++c) cores[c].Append(Loop(c == 2 ? 9 : 4), 1, 10);
  return cores;
}

TEST(CoreListTest, SharedCoresReadOneCopy) {
  CoreList cores = ThreeCores();
  EXPECT_EQ(cores.copies(), 3u);
  const CoreList& read = cores;
  ASSERT_EQ(read[0], read[1]);
  cores.Share(1, 0);
  EXPECT_TRUE(cores.Shared(0, 1));
  EXPECT_FALSE(cores.Shared(0, 2));
  EXPECT_EQ(cores.copies(), 2u);
  EXPECT_EQ(&read[0], &read[1]);
  size_t n = 0;
  for (const CoreProgram& core : cores) n += core.instructions.size();
  EXPECT_EQ(n, 3u);  // iteration visits every core, shared or not
}

TEST(CoreListTest, WritingASharedCoreCopiesItFirst) {
  CoreList cores = ThreeCores();
  cores.Share(1, 0);
  cores[1].Append(Loop(5));
  EXPECT_FALSE(cores.Shared(0, 1));
  const CoreList& read = cores;
  EXPECT_EQ(read[0].instructions.size(), 1u);
  EXPECT_EQ(read[1].instructions.size(), 2u);
  // A copied list shares with the original until one of them is written.
  CoreList copy = cores;
  EXPECT_EQ(copy, cores);
  copy[2].instructions[0] = Loop(1);
  EXPECT_EQ(read[2].instructions[0], Loop(9));
  EXPECT_FALSE(copy == cores);
}

TEST(CoreListTest, EqualityIsOfTheCodeAndEqualCodeHashesEqual) {
  CoreList shared = ThreeCores();
  shared.Share(1, 0);
  const CoreList separate = ThreeCores();
  EXPECT_EQ(shared, separate);
  EXPECT_EQ(Hash(separate[0]), Hash(separate[1]));
  EXPECT_NE(Hash(separate[0]), Hash(separate[2]));
  CoreProgram tagged = separate[0];
  tagged.hlo_tags[0] = 2;  // same instructions, another HLO tag: different code
  EXPECT_FALSE(tagged == separate[0]);
  EXPECT_NE(Hash(tagged), Hash(separate[0]));
}



// Hash covers the instructions, their fields and both metadata columns.
TEST(ProgramHashTest, EveryPartOfTheCodeChangesTheHash) {
  CoreProgram a;
  a.Append(Loop(4), 1, 10);
  a.Append(op::CtrlEndLoop{}.ToInstruction(), 1, 11);
  const uint64_t h = Hash(a);
  EXPECT_EQ(Hash(a), h);  // deterministic
  CoreProgram field = a, line = a, tag = a, longer = a;
  field.instructions[0] = Loop(5);
  line.source_lines[1] = 12;
  tag.hlo_tags[0] = 2;
  longer.Append(op::Nop{}.ToInstruction(), kNoHloTag, kNoSourceLine);
  for (const CoreProgram* other : {&field, &line, &tag, &longer}) EXPECT_NE(Hash(*other), h);
  EXPECT_NE(Hash(CoreProgram{}), h);
}

}  // namespace
}  // namespace tpusim::isa
