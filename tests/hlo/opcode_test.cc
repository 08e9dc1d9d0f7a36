// The opcode table round-trips every opcode; spellings are XLA's.
#include "hlo/opcode.h"

#include <gtest/gtest.h>

#include <set>

namespace tpusim::hlo {
namespace {

TEST(OpcodeTest, EveryOpcodeRoundTripsThroughItsSpelling) {
  std::set<std::string_view> seen;
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const HloOpcode op = static_cast<HloOpcode>(i);
    const std::string_view text = HloOpcodeString(op);
    EXPECT_TRUE(seen.insert(text).second) << "duplicate spelling " << text;
    std::optional<HloOpcode> back = ParseHloOpcode(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, op);
  }
  EXPECT_FALSE(ParseHloOpcode("dott").has_value());
}

TEST(OpcodeTest, XlaSpellingsAndCategories) {
  EXPECT_EQ(HloOpcodeString(HloOpcode::kGetTupleElement), "get-tuple-element");
  EXPECT_EQ(HloOpcodeString(HloOpcode::kOptimizationBarrier), "opt-barrier");
  EXPECT_EQ(HloOpcodeString(HloOpcode::kExp), "exponential");
  EXPECT_EQ(ParseHloOpcode("all-reduce-start"), HloOpcode::kAllReduceStart);
  EXPECT_EQ(ParseHloOpcode("select-and-scatter"), HloOpcode::kSelectAndScatter);
  EXPECT_EQ(ParseHloOpcode("rng-bit-generator"), HloOpcode::kRngBitGenerator);
  EXPECT_TRUE(IsElementwise(HloOpcode::kCompare));
  EXPECT_TRUE(IsElementwise(HloOpcode::kSelect));
  EXPECT_FALSE(IsElementwise(HloOpcode::kDot));
  EXPECT_TRUE(IsCollective(HloOpcode::kCollectivePermuteDone));
  EXPECT_TRUE(IsTranscendental(HloOpcode::kTanh));
  EXPECT_FALSE(IsTranscendental(HloOpcode::kMultiply));
  EXPECT_EQ(HloOpcodeCategoryOf(HloOpcode::kWhile), HloOpcodeCategory::kControlFlow);
}

}  // namespace
}  // namespace tpusim::hlo
