// One test per production of XLA's HLO text grammar (xla/hlo/parser/hlo_parser.cc), each checking
// that tpusim accepts what XLA's parser accepts and reads the same meaning from it. Each module
// also goes through print -> parse and must come back structurally equal.
#include <gtest/gtest.h>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/structural_equal.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

std::unique_ptr<HloModule> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "grammar.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  const std::string printed = PrintModule(**m);
  StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed, "printed");
  EXPECT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
  if (again.ok()) {
    std::string diff;
    EXPECT_TRUE(ModulesEqual(**m, **again, &diff)) << diff << "\n" << printed;
  }
  EXPECT_TRUE(VerifyModule(**m, text).ok()) << VerifyModule(**m, text).message();
  return std::move(m).value();
}

std::string ParseError(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "grammar.hlo");
  EXPECT_FALSE(m.ok());
  return m.ok() ? std::string() : std::string(m.status().message());
}

const HloInstruction* Find(const HloModule& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (HloInstruction* i = c->FindInstruction(name)) return i;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// sub_attributes ::= '{' (','? attribute)* '}'  (ParseSubAttributes, used by metadata)
TEST(ParserGrammarTest, SubAttributesTakeAnOptionalCommaBeforeEachAttribute) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[6] parameter(0), metadata={op_type="Constant", op_name="FinalSum"}
  b = f32[6] negate(a), metadata={op_type="Neg" op_name="n", source_file="x.py" source_line=4}
  ROOT c = f32[6] abs(b), metadata={, op_name="lead"}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "a")->metadata().op_type, "Constant");
  EXPECT_EQ(Find(*m, "a")->metadata().op_name, "FinalSum");
  EXPECT_EQ(Find(*m, "b")->metadata().source_file, "x.py");
  EXPECT_EQ(Find(*m, "b")->metadata().source_line, 4);
  EXPECT_EQ(Find(*m, "c")->metadata().op_name, "lead");
  // A trailing comma is not an attribute: XLA refuses it too.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n ROOT a = f32[] parameter(0), "
                       "metadata={op_name=\"x\",}\n}\n")
                .find("metadata"),
            std::string::npos);
}

// metadata keys XLA knows beyond op_type/op_name/source_file/source_line.
TEST(ParserGrammarTest, MetadataKeysOfNewerDumps) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT a = f32[2] parameter(0), metadata={op_name="jit(f)/x" source_file="f.py" source_line=3 source_end_line=4 source_column=7 source_end_column=9 profile_type={1} deduplicated_name="d" scheduling_name="s" stack_frame_id=2}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "a")->metadata().source_line, 3);
}

// param_list ::= '(' param (',' param)* ')' — ParseParamList parses the entries and discards
// them: the body's parameter(N) instructions define the computation's parameters.
TEST(ParserGrammarTest, SignatureParameterListIsNotCheckedAgainstTheBody) {
  auto m = Parse(R"(HloModule m
ENTRY main () -> f32[6] {
  a = f32[6] parameter(0)
  b = f32[6] parameter(1)
  ROOT c = f32[6] add(a, b)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->num_parameters(), 2);
}

// param_list_to_shape ::= param_list '->' shape — the result shape must be compatible with the
// root's (XLA: "Shape of computation ... is not compatible with that of its root instruction").
TEST(ParserGrammarTest, SignatureResultShapeMustMatchTheRoot) {
  const std::string err = ParseError(R"(HloModule m
ENTRY main (a: f32[6]) -> f32[7] {
  a = f32[6] parameter(0)
  ROOT c = f32[6] negate(a)
})");
  EXPECT_NE(err.find("grammar.hlo:2:27"), std::string::npos) << err;
  EXPECT_NE(err.find("declared to return f32[7]"), std::string::npos) << err;
}

// The stack-frame index (FileNames / FunctionNames / FileLocations / StackFrames) XLA prints
// between the header and the computations.
TEST(ParserGrammarTest, StackFrameIndexAfterTheHeader) {
  auto m = Parse(R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

FileNames
1 "a.py"
2 "b.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}
StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY e {
  a = f32[4] parameter(0)
  ROOT b = f32[4] negate(a), metadata={op_name="x" stack_frame_id=1}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "b");
  EXPECT_NE(ParseError("HloModule m\nFileNames\n1 2\nENTRY e {\n ROOT a = f32[] parameter(0)\n}\n")
                .find("FileNames table"),
            std::string::npos);
}

// instruction ::= ('ROOT')? name '=' shape? opcode operands — the shape may be left out where
// XLA can infer it (CanInferShape).
TEST(ParserGrammarTest, ResultShapeMayBeOmittedWhereItCanBeInferred) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[4,8] parameter(1)
  c = add(a, b)
  t = transpose(c), dimensions={1,0}
  k = compare(a, b), direction=LT
  ROOT r = f32[8,4] negate(t)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "c")->shape().ToString(false), "f32[4,8]");
  EXPECT_EQ(Find(*m, "t")->shape().ToString(false), "f32[8,4]");
  EXPECT_EQ(Find(*m, "k")->shape().ToString(false), "pred[4,8]");
  // A parameter (or constant, convert, reshape, ...) needs its shape written.
  const std::string err = ParseError("HloModule m\nENTRY e {\n ROOT a = parameter(0)\n}\n");
  EXPECT_NE(err.find("grammar.hlo:3:7"), std::string::npos) << err;
  EXPECT_NE(err.find("no result shape"), std::string::npos) << err;
}

// operand ::= (shape)? name | (shape)? opcode operands — an operand may be a nested instruction
// (no attributes), which XLA names `<opcode>.anon`.
TEST(ParserGrammarTest, OperandsMayBeNestedInstructions) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[4] multiply(f32[4] add(a, negate(b)), a)
})");
  ASSERT_NE(m, nullptr);
  const HloInstruction* d = Find(*m, "d");
  ASSERT_EQ(d->operand_count(), 2);
  EXPECT_EQ(d->operand(0)->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(d->operand(0)->operand(1)->opcode(), HloOpcode::kNegate);
  EXPECT_EQ(d->operand(0)->operand(1)->shape().ToString(false), "f32[4]");
  EXPECT_EQ(m->entry_computation()->root_instruction(), d);
}

// computation ::= ('ENTRY')? name (param_list_to_shape)? instruction_list
//                 (',' 'execution_thread=' string)?
TEST(ParserGrammarTest, ComputationWithoutSignatureAndWithExecutionThread) {
  auto m = Parse(R"(HloModule m
side {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}, execution_thread="host"
ENTRY e {
  ROOT a = f32[] parameter(0)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computations()[0]->execution_thread(), "host");
}

// sharding ::= '{' single_sharding | tuple_sharding '}' with metadata=, shard_as / shard_like,
// and the named (mesh-and-axes) form.
TEST(ParserGrammarTest, ShardingModifiersMetadataAndNamedMeshes) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0), sharding={replicated metadata={op_name="a"}}
  b = f32[4] negate(a), sharding={devices=[2]<=[2] shard_as 1}
  c = f32[4] abs(b), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
  ROOT d = f32[4] exponential(c), sharding={mesh[x=2,y=2], [{x}]}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "a")->sharding()->kind, HloSharding::Kind::kReplicated);
  EXPECT_EQ(Find(*m, "b")->sharding()->tile_assignment_devices.size(), 2u);
  EXPECT_TRUE(Find(*m, "c")->sharding()->last_tile_dim_replicate);
  EXPECT_EQ(Find(*m, "d")->sharding()->ToString(), "{mesh[x=2,y=2], [{x}]}");
}

// window ::= '{' size stride? pad? lhs_dilate? rhs_dilate? rhs_reversal? '}' in any order.
TEST(ParserGrammarTest, WindowFieldsInAnyOrder) {
  auto m = Parse(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[1,8,8,1] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[1,4,4,1] reduce-window(a, z), window={stride=1x2x2x1 pad=0_0x0_0x0_0x0_0 size=1x2x2x1}, to_apply=max
})");
  ASSERT_NE(m, nullptr);
  const HloInstruction* r = Find(*m, "r");
  ASSERT_EQ(r->window().dimensions.size(), 4u);
  EXPECT_EQ(r->window().dimensions[1].size, 2);
  EXPECT_EQ(r->window().dimensions[1].stride, 2);
}

// layout ::= '{' minor_to_major (':' D(...) T(...)* L(...) #(..) *(..) E(..) S(..) SC(..) M(..))?
// '}'
TEST(ParserGrammarTest, LayoutsWithTilesMemorySpaceAndElementSize) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[8,128]{1,0:T(8,128)} parameter(0)
  c = s64[]{:T(128)} constant(1)
  b = bf16[8,128]{1,0:T(8,128)(2,1)S(1)} convert(a)
  i = s4[256]{0:T(256)E(4)} constant({...})
  ROOT r = (bf16[8,128]{1,0}, s64[]) tuple(b, c)
})");
  ASSERT_NE(m, nullptr);
  const Layout& l = Find(*m, "b")->shape().layout();
  EXPECT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.memory_space, 1);
  EXPECT_EQ(Find(*m, "i")->shape().layout().element_size_in_bits, 4);
}

// dimension_sizes ::= '[' (('<=')? int | '?')* ']' — bounded and unbounded dynamic dimensions.
TEST(ParserGrammarTest, DynamicDimensions) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[<=8,4] parameter(0)
  ROOT b = f32[<=8,4] negate(a)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(Find(*m, "a")->shape().is_dynamic_dimension(0));
  EXPECT_FALSE(Find(*m, "a")->shape().is_dynamic_dimension(1));
}

// literal: commas between elements, nested braces, tuple literals, complex (re, im), bools.
TEST(ParserGrammarTest, LiteralForms) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{1, 2}, {3, inf}})
  b = pred[3] constant({true, false, true})
  c = (f32[], s32[2]) constant((1.5, {1, 2}))
  d = c64[] constant((1, 2))
  ROOT r = f32[2,2] negate(a)
})");
  ASSERT_NE(m, nullptr);
}

// replica_groups ::= '{' int_list_list '}' | '[' n ',' m ']' '<=' '[' dims ']' ('T(' perm ')')?
TEST(ParserGrammarTest, ReplicaGroupsEveryForm) {
  auto m = Parse(R"(HloModule m, replica_count=4
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] all-reduce(a), replica_groups={}, to_apply=sum
  c = f32[4] all-reduce(b), replica_groups={{0,1},{2,3}}, to_apply=sum
  d = f32[4] all-reduce(c), replica_groups=[2,2]<=[4], to_apply=sum
  ROOT f = f32[4] all-reduce(d), replica_groups=[2,2]<=[2,2]T(1,0), channel_id=3, use_global_device_ids=true, to_apply=sum
})");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(Find(*m, "b")->replica_groups().groups.empty());
  EXPECT_EQ(Find(*m, "c")->replica_groups().groups.size(), 2u);
  StatusOr<std::vector<std::vector<int64_t>>> g =
      ExpandReplicaGroups(Find(*m, "f")->replica_groups(), 4);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)[0], (std::vector<int64_t>{0, 2}));
}

// frontend_attributes ::= '{' (name '=' (string | json_dict))* '}'; backend_config likewise.
TEST(ParserGrammarTest, FrontendAttributesAndBackendConfigTakeStringsOrJsonDicts) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0), frontend_attributes={_xla_compute_type="host", grad_x="false"}
  ROOT b = f32[4] custom-call(a), custom_call_target="foo", backend_config={"k": {"n": 1}}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "a")->frontend_attributes().size(), 2u);
}

// opcode ::= name | name '-start' | name '-update' | name '-done' — XLA's async wrapping of an op
// without its own start/done pair; tpusim runs the op in place of the start.
TEST(ParserGrammarTest, AsyncWrappedOpcodes) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = ((f32[4]), f32[4], u32[]) custom-call-start(a), custom_call_target="foo"
  u = ((f32[4]), f32[4], u32[]) custom-call-update(s)
  ROOT d = f32[4] custom-call-done(u)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "s")->opcode(), HloOpcode::kCustomCall);
  EXPECT_EQ(Find(*m, "s")->shape().ToString(false), "f32[4]");
  EXPECT_EQ(Find(*m, "u")->opcode(), HloOpcode::kCopy);
  EXPECT_EQ(Find(*m, "d")->opcode(), HloOpcode::kCopy);
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n ROOT a = f32[] frob-start()\n}\n")
                .find("unknown opcode 'frob-start'"),
            std::string::npos);
}

// A module without the `HloModule` header (XLA's parse_module_without_header, used by XLA's own
// test files): named after its entry computation.
TEST(ParserGrammarTest, ModuleWithoutHeader) {
  auto m = Parse(R"(add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  p = f32[2, 3, 8] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[2,3] reduce(p, c), dimensions={2}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "module_fused");
  EXPECT_EQ(m->entry_computation()->name(), "fused");
}

// attribute value ::= computation name | '{' instruction_list '}' (XLA's ParseHloComputation: a
// computation written inline, e.g. a reducer).
TEST(ParserGrammarTest, ComputationsWrittenInline) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT s = f32[] add(x, y)
  }
})");
  ASSERT_NE(m, nullptr);
  const HloInstruction* r = Find(*m, "r");
  ASSERT_NE(r->to_apply(), nullptr);
  EXPECT_EQ(r->to_apply()->name(), "r.computation");
  EXPECT_EQ(r->to_apply()->root_instruction()->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(m->entry_computation()->name(), "e");
}

// MLIR (StableHLO) text is not HLO text: the error says how to get HLO text.
TEST(ParserGrammarTest, MlirTextGetsAnErrorSayingHowToGetHlo) {
  const std::string err = ParseError(R"(module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  EXPECT_NE(err.find("grammar.hlo:1:1"), std::string::npos) << err;
  EXPECT_NE(err.find("MLIR"), std::string::npos) << err;
  EXPECT_NE(err.find("compiler_ir('hlo')"), std::string::npos) << err;
  EXPECT_NE(err.find("_get_xla_tensors_hlo"), std::string::npos) << err;
  EXPECT_NE(err.find("Getting your HLO"), std::string::npos) << err;
}

// XLA's FileCheck test files carry MLIR in their comments (CHECK lines of the emitted code): a
// headerless module with such comments is HLO, and parses.
TEST(ParserGrammarTest, MlirInCommentsDoesNotMakeTheTextMlir) {
  auto m = Parse(R"(// RUN: fusion_to_mlir %s | FileCheck %s
fusion {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
}
// CHECK: func.func @main(%[[ARG0:.*]]: tensor<4xf32>
// CHECK:   %[[R:.*]] = stablehlo.negate %[[ARG0]]
// CHECK-SAME: {mhlo.sharding = "{replicated}"}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "fusion");
}

// A dump after optimization (is_scheduled=true, or fusions) is verified as XLA does after float
// normalization: a written floating-point type may differ from the inferred one.
TEST(ParserGrammarTest, OptimizedDumpsAllowMixedPrecision) {
  const char* kText = R"(HloModule m, is_scheduled=true
ENTRY e {
  a = f32[8,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = bf16[3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kText, "opt.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(IsOptimizedDump(**m));
  EXPECT_TRUE(VerifyModule(**m, kText).ok()) << VerifyModule(**m, kText).message();
  // Before optimization the same mismatch is an error.
  std::string before = kText;
  before.replace(before.find(", is_scheduled=true"), 19, "");
  StatusOr<std::unique_ptr<HloModule>> m2 = ParseHloModule(before, "before.hlo");
  ASSERT_TRUE(m2.ok());
  EXPECT_FALSE(IsOptimizedDump(**m2));
  EXPECT_FALSE(VerifyModule(**m2, before).ok());
}

}  // namespace
}  // namespace tpusim::hlo
