// annotation-custom-calls (compiler/passes/annotation_custom_calls.h): LayoutConstraint becomes a
// copy with its layout, the host-offload annotations (MoveToHost, MoveToDevice,
// annotate_device_placement) become their operand; modules using them run with the evaluator's
// values bit for bit, and malformed annotations are located errors.
#include "compiler/passes/annotation_custom_calls.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using hlo::HloOpcode;

int CountCustomCalls(const hlo::HloModule& m) {
  int n = 0;
  for (const auto& comp : m.computations()) {
    for (const auto& i : comp->instructions()) n += i->opcode() == HloOpcode::kCustomCall;
  }
  return n;
}

constexpr const char* kLayoutConstraint = R"(
HloModule m
ENTRY e {
  a = f32[16,64] parameter(0)
  w = f32[64,32] parameter(1)
  d = f32[16,32] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  l = f32[16,32]{0,1} custom-call(d), custom_call_target="LayoutConstraint"
  ROOT t = f32[16,32] tanh(l)
})";

TEST(AnnotationCustomCallsTest, LayoutConstraintIsACopyIntoItsLayout) {
  auto m = testing::Parse(kLayoutConstraint);
  ASSERT_NE(m, nullptr);
  AnnotationCustomCalls pass;
  auto changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountCustomCalls(*m), 0);
  const hlo::HloInstruction* copy = m->entry_computation()->root_instruction()->operand(0);
  EXPECT_EQ(copy->opcode(), HloOpcode::kCopy);
  EXPECT_EQ(copy->operand(0)->opcode(), HloOpcode::kDot);
  EXPECT_EQ(copy->shape().ToString(true), "f32[16,32]{0,1}");
  testing::ExpectSameBits(kLayoutConstraint);
}

constexpr const char* kHostOffload = R"(
HloModule m
body {
  p = f32[8,128] parameter(0)
  h = f32[8,128] custom-call(p), custom_call_target="MoveToHost"
  ROOT d = f32[8,128] custom-call(h), custom_call_target="MoveToDevice"
}
ENTRY e {
  x = f32[8,128] parameter(0)
  e = f32[8,128] exponential(x)
  c = f32[8,128] call(e), to_apply=body
  y = f32[8,128] custom-call(c), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="pinned_host"}
  z = f32[8,128] custom-call(y), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="device"}
  ROOT n = f32[8,128] add(z, x)
})";

TEST(AnnotationCustomCallsTest, HostOffloadAnnotationsAreIdentitiesInEveryComputation) {
  auto m = testing::Parse(kHostOffload);
  ASSERT_NE(m, nullptr);
  int annotations = 0;
  for (const auto& comp : m->computations()) {
    for (const auto& i : comp->instructions()) annotations += IsHostOffloadAnnotation(*i);
  }
  EXPECT_EQ(annotations, 4);
  AnnotationCustomCalls pass;
  auto changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(CountCustomCalls(*m), 0);
  EXPECT_EQ(m->entry_computation()->root_instruction()->operand(0)->opcode(), HloOpcode::kCall);
  testing::ExpectSameBits(kHostOffload);
}

void ExpectRefused(const std::string& text, const std::string& what) {
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  AnnotationCustomCalls pass;
  auto changed = pass.Run(*m);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(changed.status().message().find(what), std::string::npos)
      << changed.status().message();
}

TEST(AnnotationCustomCallsTest, MalformedAnnotationsAreLocatedErrors) {
  ExpectRefused(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="tpu_sram"}
})",
                "test.hlo:5:8: error: %y (custom-call): _xla_buffer_placement=\"tpu_sram\" is not a memory");
  ExpectRefused(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x), custom_call_target="annotate_device_placement"
})",
                "%y (custom-call): custom_call_target=\"annotate_device_placement\" needs");
  ExpectRefused(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[4,2] custom-call(x), custom_call_target="LayoutConstraint"
})",
                "%y (custom-call): custom_call_target=\"LayoutConstraint\" annotates one array");
  ExpectRefused(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x, x), custom_call_target="MoveToHost"
})",
                "got 2 operand(s)");
}

}  // namespace
}  // namespace tpusim::compiler
