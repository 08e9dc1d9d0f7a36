// rng-bit-generator with algorithm=rng_three_fry / rng_philox (hlo/eval/kernels/rng_xla.h): the
// bits and the new state XLA computes, pinned by values XLA:CPU gave. Produced with jax/jaxlib
// 0.10.2 (jax_enable_x64) by
//   jax.jit(lambda k: jax.lax.rng_bit_generator(k, SHAPE, dtype=DTYPE, algorithm=ALG))(
//       np.array([0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFE], np.uint64))
// for ALG = RandomAlgorithm.RNG_THREE_FRY / RNG_PHILOX (the HLO is rng-bit-generator(u64[2])
// with algorithm=rng_three_fry / rng_philox); the u64[3] state case by running the HLO text of
// PhiloxWithAThreeWordState on XLA:CPU (xla_client.hlo.hlo_module_from_text, compiled by the CPU
// client). The counter 0xFFFFFFFFFFFFFFFE wraps, so the 128-bit carry is exercised.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;
using testing::EvalHloStatus;

constexpr uint64_t kKey = 0x0123456789ABCDEFull;

Literal State(const std::vector<uint64_t>& words) {
  auto lit = Literal::Create(Shape(PrimitiveType::kU64, {static_cast<int64_t>(words.size())}));
  EXPECT_TRUE(lit.ok());
  for (size_t i = 0; i < words.size(); ++i) lit->mutable_data<uint64_t>()[i] = words[i];
  return std::move(lit).value();
}

// The state and the bits (as u64, row-major) of rng-bit-generator(state) into `bits`.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> Generate(const std::string& algorithm,
                                                                 const std::string& bits,
                                                                 const std::vector<uint64_t>& s) {
  const std::string st = "u64[" + std::to_string(s.size()) + "]";
  const Literal r = EvalHlo("HloModule m\nENTRY e {\n  s = " + st + " parameter(0)\n  ROOT r = (" +
                                st + ", " + bits + ") rng-bit-generator(s), algorithm=" +
                                algorithm + "\n}\n",
                            {State(s)});
  if (!r.shape().IsTuple()) return {};
  std::vector<uint64_t> state, values;
  for (int64_t i = 0; i < r.element(0).element_count(); ++i) {
    state.push_back(r.element(0).data<uint64_t>()[i]);
  }
  for (int64_t i = 0; i < r.element(1).element_count(); ++i) {
    values.push_back(static_cast<uint64_t>(r.element(1).GetAsDouble(i)));
    if (r.element(1).element_type() == PrimitiveType::kU64) {
      values.back() = r.element(1).data<uint64_t>()[i];  // beyond a double's 53 bits
    }
  }
  return {state, values};
}

struct Case {
  const char* algorithm;
  const char* bits;
  uint64_t counter;  // state[1] after
  std::vector<uint64_t> values;
};

TEST(EvalRngXlaTest, BitsAndStateAreXlas) {
  const std::vector<Case> cases = {
      {"rng_three_fry", "u32[3,5]", 0x7,
       {0xb0f4215b, 0xe19a60b4, 0xb3d7494, 0xacf8c4dc, 0xaaa4d889, 0x75a52907, 0xd3dd8613,
        0x35d0e5f1, 0x8ed17fe4, 0x7c2f19d8, 0xde79bbbd, 0x1713fd18, 0xb09d029e, 0x7d84f441,
        0x6ca3e732}},
      {"rng_three_fry", "u32[]", 0xffffffffffffffff, {0xb0f4215b}},
      {"rng_three_fry", "u64[5]", 0x3,
       {0xe19a60b4b0f4215b, 0xacf8c4dc0b3d7494, 0x6b35c4f4aaa4d889, 0xd3dd861375a52907,
        0x8ed17fe435d0e5f1}},
      {"rng_three_fry", "u16[7]", 0x2, {0x215b, 0x60b4, 0x7494, 0xc4dc, 0xd889, 0xc4f4, 0x2907}},
      {"rng_philox", "u32[3,5]", 0x2,
       {0xa485194, 0x41c5f806, 0xd6822fee, 0x3885a3d4, 0x41eb59f3, 0x307385e0, 0x5b8b3389,
        0xa262f67c, 0x7006d264, 0xd71fd4de, 0x3aff468e, 0x40b5f768, 0x34da5d11, 0xa2a4e857,
        0xfc81d5f9}},
      {"rng_philox", "u32[]", 0xffffffffffffffff, {0xa485194}},
      {"rng_philox", "u64[5]", 0x1,
       {0x41c5f8060a485194, 0x3885a3d4d6822fee, 0x307385e041eb59f3, 0xa262f67c5b8b3389,
        0xd71fd4de7006d264}},
      {"rng_philox", "u16[7]", 0x0, {0x5194, 0xf806, 0x2fee, 0xa3d4, 0x59f3, 0x85e0, 0x3389}},
  };
  for (const Case& c : cases) {
    const auto [state, values] = Generate(c.algorithm, c.bits, {kKey, 0xFFFFFFFFFFFFFFFEull});
    EXPECT_EQ(state, (std::vector<uint64_t>{kKey, c.counter})) << c.algorithm << " " << c.bits;
    EXPECT_EQ(values, c.values) << c.algorithm << " " << c.bits;
  }
}

// Philox with u64[3]: the counter's high word is state[2] (state[0] for u64[2]), so {k, c, k}
// draws what {k, c} does, and the carry out of the low word reaches state[2].
TEST(EvalRngXlaTest, PhiloxWithAThreeWordState) {
  const auto [state, values] =
      Generate("rng_philox", "u32[6]", {kKey, 0xFFFFFFFFFFFFFFFEull, kKey});
  EXPECT_EQ(state, (std::vector<uint64_t>{kKey, 0, kKey + 1}));
  EXPECT_EQ(values, (std::vector<uint64_t>{172511636, 1103493126, 3598856174, 948282324,
                                           1105943027, 812877280}));
}

// What XLA's expansion does not take is refused naming the algorithm and the reason: XLA:CPU
// refuses a u32[2] three-fry state too ("Binary op add with different element types").
TEST(EvalRngXlaTest, StatesAndTypesXlaDoesNotTakeAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(u32[2], u32[8]) rng-bit-generator(s), algorithm=rng_three_fry", "u32[2]"},
      {"(u64[3], u32[8]) rng-bit-generator(s), algorithm=rng_three_fry", "u64[3]"},
      {"(u64[4], u32[8]) rng-bit-generator(s), algorithm=rng_philox", "u64[4]"},
      {"(u64[2], s32[8]) rng-bit-generator(s), algorithm=rng_philox", "s32[8] random values"},
  };
  for (const auto& [op, what] : cases) {
    const std::string st = op.substr(1, op.find(',') - 1);
    const Status s = EvalHloStatus("HloModule m\nENTRY e {\n  z = " + st.substr(0, 3) +
                                   "[] constant(1)\n  s = " + st +
                                   " broadcast(z), dimensions={}\n  ROOT r = " + op + "\n}\n");
    EXPECT_FALSE(s.ok()) << op;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace tpusim::hlo
