// bitcast-convert-expander (compiler/passes/bitcast_convert_expander.h): a bitcast-convert between
// element types of different widths becomes same-width bitcast-converts, shifts, masks and ORs in
// the byte order of a little-endian copy (the evaluator's), bit for bit on the device too.
#include "compiler/passes/bitcast_convert_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

// u32 pairs -> u64 (JAX's rbg key as rng-bit-generator's state) and back; f32 -> u16 halves.
// By hand: [1, 2] -> 1 + 2 * 2^32 = 8589934593; [0xFFFFFFFF, 0x80000000] -> 0x80000000FFFFFFFF;
// 1.0f = 0x3F800000 -> u16 [0x0000, 0x3F80]; -2.0f = 0xC0000000 -> [0x0000, 0xC000].
const char* kKnown = R"(HloModule known
ENTRY e {
  k = u32[2,2] constant({{1, 2}, {4294967295, 2147483648}})
  w = u64[2] bitcast-convert(k)
  back = u32[2,2] bitcast-convert(w)
  f = f32[2] constant({1, -2})
  h = u16[2,2] bitcast-convert(f)
  ROOT t = (u64[2], u32[2,2], u16[2,2]) tuple(w, back, h)
})";

TEST(BitcastConvertExpanderTest, KnownBitsInLittleEndianOrder) {
  auto m = testing::Parse(kKnown);
  ASSERT_NE(m, nullptr);
  BitcastConvertExpander pass;
  auto changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  for (const auto& i : m->entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kBitcastConvert) continue;
    EXPECT_EQ(hlo::BitWidth(i->shape().element_type()),
              hlo::BitWidth(i->operand(0)->shape().element_type()))
        << i->name();
  }
  hlo::Evaluator ev;
  auto r = ev.Evaluate(*m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t* w = r->element(0).data<uint64_t>();
  EXPECT_EQ(w[0], 8589934593ull);
  EXPECT_EQ(w[1], 0x80000000FFFFFFFFull);
  const uint32_t* back = r->element(1).data<uint32_t>();
  EXPECT_EQ(std::vector<uint32_t>(back, back + 4),
            (std::vector<uint32_t>{1, 2, 0xFFFFFFFFu, 0x80000000u}));
  const uint16_t* h = r->element(2).data<uint16_t>();
  EXPECT_EQ(std::vector<uint16_t>(h, h + 4), (std::vector<uint16_t>{0, 0x3F80, 0, 0xC000}));
}

// Every width pair of 8, 16, 32 and 64 bits, signed, unsigned and float, both directions: the
// expansion keeps the evaluator's memcpy bits, and the device computes the same bits.
TEST(BitcastConvertExpanderTest, EveryWidthPairKeepsTheEvaluatorsBits) {
  struct Case {
    const char* from;
    const char* to;
  };
  for (const Case& c : {Case{"u32[3,2]", "u64[3]"}, Case{"s8[4,4]", "f32[4]"},
                        Case{"f32[5]", "s16[5,2]"}, Case{"u64[2]", "u8[2,8]"},
                        Case{"bf16[3,2]", "s32[3]"}, Case{"s32[6]", "u16[6,2]"},
                        Case{"u16[2,4]", "s64[2]"}}) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    const std::string text = std::string("HloModule bc\nENTRY e {\n  x = ") + c.from +
                             " parameter(0)\n  ROOT y = " + c.to + " bitcast-convert(x)\n}\n";
    BitcastConvertExpander pass;
    auto m = testing::ExpectRewriteKeepsBits(pass, text);
    ASSERT_NE(m, nullptr);
    testing::ExpectSameBits(text, "tiny");
  }
}

}  // namespace
}  // namespace tpusim::compiler
