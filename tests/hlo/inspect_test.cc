// `tpusim inspect` logic: summary content and JSON keys.
#include "hlo/inspect.h"

#include <gtest/gtest.h>

#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

TEST(InspectTest, SummaryAndJsonKeys) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(HloModule m, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3] parameter(0), sharding={devices=[2,1]<=[2]}
  w = f32[3,4] parameter(1)
  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[2,4] all-reduce(d), replica_groups=[2,2]<=[4], to_apply=add, channel_id=7
  c = f32[2,4] custom-call(r), custom_call_target="AwsNeuronGelu"
  ROOT t = (f32[2,4], f32[2,4]) tuple(c, r)
}
)");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const InspectSummary s = SummarizeModule(**m);
  EXPECT_EQ(s.instruction_count, 9);
  EXPECT_EQ(s.computations.size(), 2u);
  EXPECT_EQ(s.replica_count, 4);
  ASSERT_EQ(s.parameters.size(), 2u);
  EXPECT_EQ(s.parameters[0].shape, "f32[2,3]");
  EXPECT_EQ(s.parameters[0].bytes, 24);
  EXPECT_EQ(s.parameters[0].sharding, "{devices=[2,1]<=[2]}");
  ASSERT_EQ(s.outputs.size(), 2u);
  EXPECT_EQ(s.outputs[1].name, "t.1");
  // dot 2*8*3 = 48 FLOP; all-reduce 8 elements * 1 (add) = 8 FLOP; custom-call unknown (0).
  EXPECT_DOUBLE_EQ(s.cost.flops, 56);
  ASSERT_EQ(s.collectives.size(), 1u);
  EXPECT_EQ(s.collectives[0].replica_groups, "[2,2]<=[4]");
  EXPECT_EQ(s.collectives[0].groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(s.collectives[0].channel_id, 7);
  ASSERT_EQ(s.custom_call_targets.size(), 1u);
  EXPECT_EQ(s.custom_call_targets[0].first, "AwsNeuronGelu");
  EXPECT_EQ(s.uninferred_shapes, (std::vector<std::string>{"c"}));
  // Opcode histogram: parameter x4 (2 in add, 2 in entry) comes first.
  ASSERT_FALSE(s.opcodes.empty());
  EXPECT_EQ(s.opcodes[0], (std::pair<std::string, int64_t>{"parameter", 4}));

  const Json j = InspectToJson(s);
  for (const char* key :
       {"computations", "instructions", "opcodes", "flops", "bytes_accessed", "parameters",
        "outputs", "collectives", "shardings", "custom_call_targets"}) {
    EXPECT_NE(j.Find(key), nullptr) << key;
  }
  const std::string dumped = j.Dump(0);
  EXPECT_NE(dumped.find("\"dot\":1"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("\"instructions\":9"), std::string::npos) << dumped;
  const std::string text = InspectToText(s);
  EXPECT_NE(text.find("AwsNeuronGelu"), std::string::npos);
  EXPECT_NE(text.find("replica_groups=[2,2]<=[4]"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::hlo
