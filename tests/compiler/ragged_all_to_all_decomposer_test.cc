// ragged-all-to-all-decomposer: jax.lax.ragged_all_to_all's semantics (member j's rows
// [input_offsets_j[i], + send_sizes_j[i]) land at rows [output_offsets_j[i], ...) of member i's
// result, the rest is `output`), computed here by hand, on the evaluator and on the device; the
// pass itself keeps every device's bits; what it does not handle is a located error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/passes/ragged_all_to_all_decomposer.h"
#include "hlo/eval/evaluator.h"
#include "tests/compiler/compile_test_util.h"
#include "tests/compiler/pass_test_util.h"

namespace tpusim::compiler {
namespace {

constexpr int kN = 4, kRows = 8, kCols = 2;

constexpr char kModule[] = R"(HloModule ragged, replica_count=4
ENTRY e {
  input = f32[8,2] parameter(0)
  output = f32[8,2] parameter(1)
  io = s32[4] parameter(2)
  ss = s32[4] parameter(3)
  oo = s32[4] parameter(4)
  rs = s32[4] parameter(5)
  ROOT r = f32[8,2] ragged-all-to-all(input, output, io, ss, oo, rs), replica_groups={{0,1,2,3}}
})";

// Member j sends 1 + (i + j) % 2 rows to member i, packed in peer order from row 0 of its input;
// member i receives them packed in sender order from row 0 of its output.
int Send(int j, int i) { return 1 + (i + j) % 2; }
int InputOffset(int j, int i) {
  int o = 0;
  for (int k = 0; k < i; ++k) o += Send(j, k);
  return o;
}
int OutputOffset(int j, int i) {  // where member j's rows start in member i's output
  int o = 0;
  for (int k = 0; k < j; ++k) o += Send(k, i);
  return o;
}
float In(int j, int row, int col) { return static_cast<float>(100 * j + 2 * row + col); }

std::vector<std::vector<hlo::Literal>> Arguments() {
  std::vector<std::vector<hlo::Literal>> args(kN);
  for (int j = 0; j < kN; ++j) {
    std::vector<float> in, out(kRows * kCols, -1.0f);
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kCols; ++c) in.push_back(In(j, r, c));
    }
    std::vector<int32_t> io, ss, oo, rs;
    for (int i = 0; i < kN; ++i) {
      io.push_back(InputOffset(j, i));
      ss.push_back(Send(j, i));
      oo.push_back(OutputOffset(j, i));
      rs.push_back(Send(i, j));
    }
    args[j].push_back(hlo::Literal::FromVector<float>({kRows, kCols}, in));
    args[j].push_back(hlo::Literal::FromVector<float>({kRows, kCols}, out));
    for (const auto* v : {&io, &ss, &oo, &rs}) {
      args[j].push_back(hlo::Literal::FromVector<int32_t>({kN}, *v));
    }
  }
  return args;
}

std::vector<float> Expected(int i) {
  std::vector<float> out(kRows * kCols, -1.0f);
  for (int j = 0; j < kN; ++j) {
    for (int r = 0; r < Send(j, i); ++r) {
      for (int c = 0; c < kCols; ++c) {
        out[static_cast<size_t>((OutputOffset(j, i) + r) * kCols + c)] =
            In(j, InputOffset(j, i) + r, c);
      }
    }
  }
  return out;
}

void ExpectMember(const hlo::Literal& got, int i, const std::string& who) {
  const std::vector<float> want = Expected(i);
  ASSERT_EQ(got.element_count(), static_cast<int64_t>(want.size()));
  for (size_t e = 0; e < want.size(); ++e) {
    EXPECT_EQ(got.GetAsDouble(static_cast<int64_t>(e)), want[e])
        << who << ", member " << i << ", element " << e;
  }
}

// Every member's result of `m` on the evaluator (all kN devices in lockstep).
void ExpectEveryMemberOnTheEvaluator(const hlo::HloModule& m, const std::string& who) {
  hlo::Evaluator ev;
  auto out = ev.EvaluateReplicated(m, kN, 1, Arguments());
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (int i = 0; i < kN; ++i) ExpectMember((*out)[static_cast<size_t>(i)], i, who);
}

TEST(RaggedAllToAllTest, TheEvaluatorPlacesEachSendersRowsAtItsOffset) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  ExpectEveryMemberOnTheEvaluator(*m, "evaluator");
}

TEST(RaggedAllToAllTest, TheDecomposedModuleKeepsEveryDevicesBits) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  RaggedAllToAllDecomposer pass;
  auto changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kRaggedAllToAll), 0);
  EXPECT_EQ(testing::CountOpcode(*m, hlo::HloOpcode::kAllToAll), 2);  // the rows, the offsets
  ASSERT_TRUE(hlo::VerifyModule(*m).ok());
  ExpectEveryMemberOnTheEvaluator(*m, "decomposed");
}

TEST(RaggedAllToAllTest, TheDeviceRunsIt) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto run = testing::CompileAndRun(*m, testing::Config("tiny-4"), Arguments());
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->outputs.size(), 1u);
  ExpectMember(run->outputs[0], 0, "device");
}

TEST(RaggedAllToAllTest, OffsetsOutsideTheBuffersAreRefusedByTheEvaluator) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto args = Arguments();
  args[1][3] = hlo::Literal::FromVector<int32_t>({kN}, {1, 1, 9, 1});  // 9 rows of 8
  hlo::Evaluator ev;
  auto out = ev.EvaluateReplicated(*m, kN, 1, args);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("member 1 sends rows"), std::string::npos)
      << out.status().message();
}

TEST(RaggedAllToAllTest, SeveralUpdatesPerPeerAreALocatedError) {
  RaggedAllToAllDecomposer pass;
  testing::ExpectRefused(pass, R"(HloModule ragged, replica_count=2
ENTRY e {
  input = f32[8,2] parameter(0)
  output = f32[8,2] parameter(1)
  io = s32[4] parameter(2)
  ss = s32[4] parameter(3)
  oo = s32[4] parameter(4)
  rs = s32[4] parameter(5)
  ROOT r = f32[8,2] ragged-all-to-all(input, output, io, ss, oo, rs), replica_groups={{0,1}}
})", "several updates per peer are not handled");
}

}  // namespace
}  // namespace tpusim::compiler
