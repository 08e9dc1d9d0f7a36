// XLA's GPU GEMM custom-calls read as dots (hlo/gpu_gemm.h): the plain form becomes a dot with the
// backend_config's dimension numbers and precision; scaled, biased, epilogue and workspace forms
// stay custom-calls.
#include "hlo/gpu_gemm.h"

#include <gtest/gtest.h>

#include <string>

#include "hlo/computation.h"
#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

const HloInstruction* Root(const std::string& text) {
  static std::unique_ptr<HloModule> keep;
  auto m = ParseHloModule(text, "gemm.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  keep = std::move(m).value();
  return keep->entry_computation()->root_instruction();
}

TEST(GpuGemmTest, PlainCublasGemmIsItsDot) {
  // The quoted form with gemm_backend_config (xla/service/gpu/tests/kernel_reuse.hlo), a batch
  // dimension and HIGHEST precision.
  const HloInstruction* r = Root(
      "HloModule m\nENTRY e {\n"
      "  a = f32[2,5,3] parameter(0)\n"
      "  b = f32[2,4,3] parameter(1)\n"
      "  ROOT g = f32[2,5,4] custom-call(a, b), custom_call_target=\"__cublas$gemm\",\n"
      "    metadata={op_name=\"mm\"}, backend_config=\"{\\\"gemm_backend_config\\\":{"
      "\\\"alpha_real\\\":1,\\\"beta\\\":0,\\\"dot_dimension_numbers\\\":{"
      "\\\"lhs_contracting_dimensions\\\":[\\\"2\\\"],"
      "\\\"rhs_contracting_dimensions\\\":[\\\"2\\\"],"
      "\\\"lhs_batch_dimensions\\\":[\\\"0\\\"],\\\"rhs_batch_dimensions\\\":[\\\"0\\\"]},"
      "\\\"alpha_imag\\\":0,\\\"precision_config\\\":{"
      "\\\"operand_precision\\\":[\\\"HIGHEST\\\",\\\"HIGHEST\\\"]},"
      "\\\"epilogue\\\":\\\"DEFAULT\\\"}}\"\n"
      "}\n");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->opcode(), HloOpcode::kDot);
  EXPECT_EQ(r->name(), "g");
  EXPECT_EQ(r->metadata().op_name, "mm");
  EXPECT_EQ(r->dot_dimension_numbers().lhs_contracting_dimensions, std::vector<int64_t>{2});
  EXPECT_EQ(r->dot_dimension_numbers().rhs_contracting_dimensions, std::vector<int64_t>{2});
  EXPECT_EQ(r->dot_dimension_numbers().lhs_batch_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(r->dot_dimension_numbers().rhs_batch_dimensions, std::vector<int64_t>{0});
  ASSERT_EQ(r->precision_config().operand_precision.size(), 2u);
  EXPECT_EQ(r->precision_config().operand_precision[0], Precision::kHighest);
  EXPECT_EQ(r->operand_count(), 2);
}

TEST(GpuGemmTest, TopLevelBracedConfigOfCublasLtMatmul) {
  // The braced form with the fields at the top level (xla/service/gpu/tests/prefetch.hlo).
  const HloInstruction* r = Root(R"(HloModule m
ENTRY e {
  a = f16[8,6] parameter(0)
  b = f16[6,4] parameter(1)
  ROOT g = f16[8,4] custom-call(a, b), custom_call_target="__cublas$lt$matmul",
    backend_config={"alpha_real":1,"beta":0,"dot_dimension_numbers":{
      "lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],
      "lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"alpha_imag":0,
      "precision_config":{"operand_precision":["DEFAULT","DEFAULT"]},"epilogue":"DEFAULT"}
})");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->opcode(), HloOpcode::kDot);
  EXPECT_EQ(r->dot_dimension_numbers().lhs_contracting_dimensions, std::vector<int64_t>{1});
}

TEST(GpuGemmTest, ScaledBiasedOrFusedEpilogueCallsStayCustomCalls) {
  const char* kForms[] = {
      // alpha 2
      R"({"alpha_real":2,"beta":0,"dot_dimension_numbers":{
          "lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}})",
      // a RELU epilogue
      R"({"alpha_real":1,"epilogue":"RELU","dot_dimension_numbers":{
          "lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}})",
      // no dimension numbers
      R"({"alpha_real":1})",
  };
  for (const char* config : kForms) {
    const HloInstruction* r = Root(std::string(R"(HloModule m
ENTRY e {
  a = f32[8,6] parameter(0)
  b = f32[6,4] parameter(1)
  ROOT g = f32[8,4] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config=)") +
                                   config + "\n}\n");
    ASSERT_NE(r, nullptr) << config;
    EXPECT_EQ(r->opcode(), HloOpcode::kCustomCall) << config;
  }
  // A bias (third operand, beta 1) stays a custom-call too.
  const HloInstruction* r = Root(R"(HloModule m
ENTRY e {
  a = f32[8,6] parameter(0)
  b = f32[6,4] parameter(1)
  c = f32[8,4] parameter(2)
  ROOT g = f32[8,4] custom-call(a, b, c), custom_call_target="__cublas$gemm",
    backend_config={"alpha_real":1,"beta":1,"dot_dimension_numbers":{
      "lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}
})");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->opcode(), HloOpcode::kCustomCall);
}

}  // namespace
}  // namespace tpusim::hlo
