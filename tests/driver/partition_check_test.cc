// driver/partition_check.h: the f64 copy of a module that checks tpusim's SPMD partitioning when a
// deep network's values differ from the unpartitioned module's by summation order.
#include "driver/partition_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config_loader.h"
#include "driver/run_module.h"
#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"

namespace tpusim::driver {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;

// f32 and bf16 arithmetic, a constant, a reduce with its own computation, and a bitcast-convert
// that makes floats from u32 bits as JAX's uniform random numbers do.
constexpr const char* kModule = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[4] parameter(0)
  bits = u32[4] parameter(1)
  c = f32[4] constant({0.1, 0.2, 0.3, 0.4})
  h = bf16[4] convert(x)
  hx = f32[4] convert(h)
  m = f32[4] multiply(hx, c)
  f = f32[4] bitcast-convert(bits)
  s = f32[4] add(m, f)
  z = f32[] constant(0)
  r = f32[] reduce(s, z), dimensions={0}, to_apply=add
  back = u32[4] bitcast-convert(s)
  ROOT t = (f32[], f32[4], u32[4]) tuple(r, s, back)
}
)";

TEST(WidenFloatsToF64, EveryFloatBecomesF64ButABitcastConvertKeepsItsTypes) {
  auto module = hlo::ParseHloModule(kModule, "m.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto wide = WidenFloatsToF64(**module);
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  const hlo::HloComputation* entry = (*wide)->entry_computation();
  const hlo::Shape& root = entry->root_instruction()->shape();
  EXPECT_EQ(root.tuple_shapes(0).element_type(), PrimitiveType::kF64);
  EXPECT_EQ(root.tuple_shapes(1).element_type(), PrimitiveType::kF64);
  EXPECT_EQ(root.tuple_shapes(2).element_type(), PrimitiveType::kU32);
  for (const auto& inst : entry->instructions()) {
    if (inst->name() == "f") {
      EXPECT_EQ(inst->shape().element_type(), PrimitiveType::kF32);
    }
    if (inst->name() == "h") {
      EXPECT_EQ(inst->shape().element_type(), PrimitiveType::kF64);
    }
    if (inst->name() == "back") {
      EXPECT_EQ(inst->operand(0)->shape().element_type(), PrimitiveType::kF32) << "narrowed";
    }
  }
  // The reduce's computation widened too.
  for (const auto& comp : (*wide)->computations()) {
    if (comp->name() == "add") {
      EXPECT_EQ(comp->root_instruction()->shape().element_type(), PrimitiveType::kF64);
    }
  }
}

TEST(WidenFloatsToF64, ComputesInF64WhatTheModuleComputesInF32) {
  auto module = hlo::ParseHloModule(kModule, "m.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto wide = WidenFloatsToF64(**module);
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  auto x = Literal::Create(hlo::Shape(PrimitiveType::kF32, {4}));
  auto bits = Literal::Create(hlo::Shape(PrimitiveType::kU32, {4}));
  ASSERT_TRUE(x.ok() && bits.ok());
  const std::vector<float> xv = {1.5f, -2.0f, 3.25f, 0.5f};
  const std::vector<uint32_t> bv = {0x3F800000u, 0x40000000u, 0u, 0xBF800000u};  // 1, 2, 0, -1
  for (int i = 0; i < 4; ++i) {
    x->mutable_data<float>()[i] = xv[i];
    bits->mutable_data<uint32_t>()[i] = bv[i];
  }
  std::vector<Literal> args;
  args.push_back(std::move(*x));
  args.push_back(std::move(*bits));
  std::vector<Literal> wide_args;
  for (const Literal& a : args) {
    auto w = WidenLiteralToF64(a);
    ASSERT_TRUE(w.ok()) << w.status().message();
    wide_args.push_back(std::move(*w));
  }
  EXPECT_EQ(wide_args[0].element_type(), PrimitiveType::kF64);
  EXPECT_EQ(wide_args[1].element_type(), PrimitiveType::kU32);
  hlo::Evaluator ev{hlo::EvaluatorOptions{}};
  auto out = ev.Evaluate(**wide, wide_args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  // s = bf16(x) * c + bits-as-float, by hand in double (bf16(x) is x: each is exact in bf16).
  const double c[4] = {0.1, 0.2, 0.3, 0.4};
  const double f[4] = {1, 2, 0, -1};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    const double s = xv[i] * c[i] + f[i];
    EXPECT_DOUBLE_EQ(out->element(1).data<double>()[i], s) << i;
    sum += s;
  }
  EXPECT_NEAR(out->element(0).data<double>()[0], sum, 1e-15);
  // back = the f32 bits of s (narrowed from f64 first): s[3] = 0.5 * 0.4 - 1 = -0.8.
  EXPECT_EQ(out->element(2).data<uint32_t>()[3], 0xBF4CCCCDu);
}

TEST(WidenFloatsToF64, RefusesACustomCallWithItsName) {
  auto module = hlo::ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(a), custom_call_target="MyKernel"
}
)",
                                    "m.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto wide = WidenFloatsToF64(**module);
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(wide.status().message().find("%r (custom-call)"), std::string::npos)
      << wide.status().message();
}

TEST(WidenLiteralToF64, WidensEveryFloatLeafOfATupleExactly) {
  auto a = Literal::Create(hlo::Shape(PrimitiveType::kBF16, {2}));
  auto b = Literal::Create(hlo::Shape(PrimitiveType::kS32, {2}));
  ASSERT_TRUE(a.ok() && b.ok());
  a->mutable_data<Eigen::bfloat16>()[0] = Eigen::bfloat16(1.5f);
  a->mutable_data<Eigen::bfloat16>()[1] = Eigen::bfloat16(-0.0078125f);
  b->mutable_data<int32_t>()[0] = -7;
  b->mutable_data<int32_t>()[1] = 9;
  std::vector<Literal> parts;
  parts.push_back(std::move(*a));
  parts.push_back(std::move(*b));
  auto w = WidenLiteralToF64(Literal::MakeTuple(std::move(parts)));
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->element(0).element_type(), PrimitiveType::kF64);
  EXPECT_EQ(w->element(0).data<double>()[0], 1.5);
  EXPECT_EQ(w->element(0).data<double>()[1], -0.0078125);
  EXPECT_EQ(w->element(1).element_type(), PrimitiveType::kS32);
  EXPECT_EQ(w->element(1).data<int32_t>()[0], -7);
  EXPECT_EQ(w->element(1).data<int32_t>()[1], 9);
}

// A sum over 8 shards whose f32 result depends on the order: 1e8 + 1 rounds to 1e8 (ulp 8), so the
// unpartitioned sequential sum and the partial sums plus all-reduce give different values, which
// f64 sums exactly (14). `extra` adds a term to each element before the sum.
std::string SumOrderModule(const std::string& extra) {
  return R"(
HloModule sum_order, num_partitions=8

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[16] parameter(0), sharding={devices=[8]<=[8]}
  zero = f32[] constant(0)
  zeros = f32[16] broadcast(zero), dimensions={}
  x0 = f32[16] multiply(x, zeros)
  c = f32[16] constant({100000000, 1, 1, 1, 1, 1, 1, 1, -100000000, 1, 1, 1, 1, 1, 1, 1})
)" + extra + R"(
  y = f32[16] add(x0, c2), sharding={devices=[8]<=[8]}
  ROOT r = f32[] reduce(y, zero), dimensions={0}, to_apply=add, sharding={replicated}
}
)";
}

StatusOr<RunModuleResult> RunOnV4(const std::string& text) {
  auto module = hlo::ParseHloModule(text, "sum_order.hlo");
  if (!module.ok()) return module.status();
  static const config::ChipConfig chip = *config::LoadChipConfig("tpu-v4");
  return RunModule(**module, chip, RunOptions{});
}

TEST(PartitionCheck, ASumInAnotherOrderPassesAsThePartitionedProgramAndInF64) {
  auto r = RunOnV4(SumOrderModule("  c2 = f32[16] add(c, zeros)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->check.performed);
  EXPECT_TRUE(r->check.passed) << r->check.reason << " / " << r->check.partition_note;
  EXPECT_EQ(r->check.unpartitioned_mismatches, 8) << "every device's sum differs in f32";
  EXPECT_NE(r->check.partition_note.find("equal the partitioned program's"), std::string::npos)
      << r->check.partition_note;
  EXPECT_NE(r->check.partition_note.find("max abs difference 0,"), std::string::npos)
      << r->check.partition_note;
}

TEST(PartitionCheck, APartitionedProgramThatComputesSomethingElseFailsInF64) {
  // partition-id is 0 in the unpartitioned module and 0..7 in the partitioned program: a
  // difference no summation order explains, as a partitioning error would make.
  auto r = RunOnV4(SumOrderModule(R"(  pid = u32[] partition-id()
  pf = f32[] convert(pid)
  pb = f32[16] broadcast(pf), dimensions={}
  c2 = f32[16] add(c, pb))"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->check.performed);
  EXPECT_FALSE(r->check.passed);
  EXPECT_NE(r->check.partition_note.find("differs from the unpartitioned module in f64"),
            std::string::npos)
      << r->check.partition_note;
}

}  // namespace
}  // namespace tpusim::driver
