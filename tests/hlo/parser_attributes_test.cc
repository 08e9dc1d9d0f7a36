// Per-attribute parse tests from raw HLO strings, in both dump styles.
#include <gtest/gtest.h>

#include <cmath>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/structural_equal.h"

namespace tpusim::hlo {
namespace {

std::unique_ptr<HloModule> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  // Every test module must also survive the round trip.
  StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(PrintModule(**m), "printed");
  EXPECT_TRUE(again.ok()) << again.status().message() << "\n" << PrintModule(**m);
  if (again.ok()) {
    std::string diff;
    EXPECT_TRUE(ModulesEqual(**m, **again, &diff)) << diff << "\n" << PrintModule(**m);
  }
  return std::move(m).value();
}

const HloInstruction* Find(const HloModule& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (HloInstruction* i = c->FindInstruction(name)) return i;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

TEST(ParserTest, NewStyleModuleWithoutPercentOrOperandShapes) {
  auto m = Parse(R"(
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, num_partitions=4

region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

ENTRY main.12 {
  x = f32[8] parameter(0)
  y = f32[8]{0} exponential(x)
  ROOT z = f32[8] add(x, y)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "jit_f");
  EXPECT_TRUE(m->is_scheduled());
  EXPECT_EQ(m->num_partitions(), 4);
  EXPECT_EQ(m->entry_computation_layout(), "{(f32[8]{0})->f32[8]{0}}");
  EXPECT_EQ(m->entry_computation()->name(), "main.12");
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "z");
  EXPECT_EQ(m->computations()[0]->root_instruction()->opcode(), HloOpcode::kAdd);
  const HloInstruction* z = Find(*m, "z");
  ASSERT_EQ(z->operand_count(), 2);
  EXPECT_EQ(z->operand(1)->name(), "y");
  EXPECT_EQ(z->operand(0)->users().size(), 2u);  // y and z use x
}

TEST(ParserTest, EntryIsLastWithoutEntryKeywordAndRootIsLast) {
  auto m = Parse(
      "HloModule m\nc1 {\n p = f32[] parameter(0)\n ROOT n = f32[] negate(p)\n}\n"
      "c2 {\n p = f32[] parameter(0)\n q = f32[] abs(p)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "c2");
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "q");
}

TEST(ParserTest, ComputationsMayBeReferencedBeforeDefinition) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sum
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "r")->to_apply()->name(), "sum");
  EXPECT_EQ(m->entry_computation()->name(), "e");
  // Post order puts the callee first.
  EXPECT_EQ(m->MakeComputationPostOrder().front()->name(), "sum");
}

TEST(ParserTest, TupleShapesWithIndexCommentsAndLayouts) {
  auto m = Parse(R"(HloModule m
ENTRY %e (p: (f32[2], s32[], /*index=2*/bf16[3,4])) -> bf16[3,4] {
  %p = (f32[2]{0}, s32[], /*index=2*/bf16[3,4]{0,1:T(8,128)(2,1)E(16)S(1)}) parameter(0)
  ROOT %g = bf16[3,4]{0,1:T(8,128)(2,1)E(16)S(1)} get-tuple-element((f32[2]{0}, s32[], bf16[3,4]{0,1}) %p), index=2
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* g = Find(*m, "g");
  EXPECT_EQ(g->tuple_index(), 2);
  const Layout& l = g->shape().layout();
  EXPECT_EQ(l.minor_to_major, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.tiles[0].dims, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(l.tiles[1].dims, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(l.element_size_in_bits, 16);
  EXPECT_EQ(l.memory_space, 1);
  EXPECT_EQ(g->shape().ToString(), "bf16[3,4]{0,1:T(8,128)(2,1)E(16)S(1)}");
}

TEST(ParserTest, ScalarTiledLayoutAndDynamicDimensions) {
  StatusOr<Shape> s = ParseShape("s64[]{:T(128)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->layout().tiles.size(), 1u);
  StatusOr<Shape> d = ParseShape("s32[<=8,2]{1,0}");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->is_dynamic_dimension(0));
  EXPECT_FALSE(d->is_dynamic_dimension(1));
  EXPECT_EQ(d->dimensions(0), 8);
  EXPECT_EQ(d->ToString(), "s32[<=8,2]{1,0}");
  StatusOr<Shape> u = ParseShape("f32[?,4]");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->is_dynamic_dimension(0));
  EXPECT_EQ(u->ToString(), "f32[?,4]");
  StatusOr<Shape> e = ParseShape("()");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->IsTuple());
  EXPECT_EQ(e->tuple_shapes_size(), 0);
  // Unknown layout attributes are kept verbatim.
  StatusOr<Shape> x = ParseShape("f32[2]{0:T(128)D(8)}");
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(x->layout().extra, "D(8)");
  EXPECT_EQ(x->ToString(), "f32[2]{0:T(128)D(8)}");
}

TEST(ParserTest, HugeShapeParsesWithoutAllocating) {
  // 2^39 elements (2 TiB of f32): parsing and inspecting must be symbolic.
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[1024,32,4096,4096]{3,2,1,0} parameter(0)
  c = f32[1024,32,4096,4096]{3,2,1,0} constant({...})
  ROOT s = f32[1024,32,4096,4096]{3,2,1,0} add(a, c)
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* c = Find(*m, "c");
  EXPECT_TRUE(c->literal().elided);
  EXPECT_TRUE(c->literal().float_values.empty());
  EXPECT_EQ(c->shape().ElementCount(), int64_t{1024} * 32 * 4096 * 4096);
  EXPECT_EQ(c->shape().ByteSize(), int64_t{1024} * 32 * 4096 * 4096 * 4);
}

TEST(ParserTest, ConstantsNestedInfNanPredAndIntegers) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[2,3] constant({ { 1, -2.5, 1e-05 }, { inf, -inf, nan } })
  b = pred[3] constant({true, false, true})
  c = s8[2] constant({-128, 127})
  d = u64[] constant(18446744073709551615)
  f = bf16[] constant(0.1001)
  g = f32[1] constant({0.5})
  h = f32[0] constant({})
  t = (f32[], s32[]) constant((1.5, 2))
  k = c64[] constant((1, -2))
  ROOT r = (f32[2,3]) tuple(a)
}
)");
  ASSERT_NE(m, nullptr);
  const LiteralValues& a = Find(*m, "a")->literal();
  ASSERT_EQ(a.float_values.size(), 6u);
  EXPECT_EQ(a.float_values[1], -2.5);
  EXPECT_EQ(a.float_values[2], 1e-05);
  EXPECT_TRUE(std::isinf(a.float_values[3]) && a.float_values[3] > 0);
  EXPECT_TRUE(std::isinf(a.float_values[4]) && a.float_values[4] < 0);
  EXPECT_TRUE(std::isnan(a.float_values[5]));
  EXPECT_EQ(Find(*m, "b")->literal().int_values, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(Find(*m, "c")->literal().int_values, (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(static_cast<uint64_t>(Find(*m, "d")->literal().int_values.at(0)), UINT64_MAX);
  EXPECT_EQ(Find(*m, "f")->literal().float_values.at(0), 0.1001);
  EXPECT_EQ(Find(*m, "h")->literal().float_values.size(), 0u);
  const LiteralValues& t = Find(*m, "t")->literal();
  ASSERT_EQ(t.tuple_elements.size(), 2u);
  EXPECT_EQ(t.tuple_elements[1].int_values, (std::vector<int64_t>{2}));
  EXPECT_EQ(Find(*m, "k")->literal().float_values, (std::vector<double>{1, -2}));
  EXPECT_EQ(PrintLiteral(a, Find(*m, "a")->shape()), "{ {1, -2.5, 1e-05}, {inf, -inf, nan} }");
}

TEST(ParserTest, ConvolutionWindowDimLabelsAndGroups) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  in = f32[8,64,28,28] parameter(0)
  k = f32[3,3,32,128] parameter(1)
  ROOT c = f32[4,128,14,15] convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x-1_3 lhs_dilate=1x1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=bf01_01io->bf01, feature_group_count=2, batch_group_count=2, operand_precision={high,highest}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* c = Find(*m, "c");
  const ConvolutionDimensionNumbers& d = c->convolution_dimension_numbers();
  EXPECT_EQ(d.input_batch_dimension, 0);
  EXPECT_EQ(d.input_feature_dimension, 1);
  EXPECT_EQ(d.input_spatial_dimensions, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(d.kernel_input_feature_dimension, 2);
  EXPECT_EQ(d.kernel_output_feature_dimension, 3);
  EXPECT_EQ(d.kernel_spatial_dimensions, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(d.output_feature_dimension, 1);
  const Window& w = c->window();
  ASSERT_EQ(w.dimensions.size(), 2u);
  EXPECT_EQ(w.dimensions[1].padding_low, -1);
  EXPECT_EQ(w.dimensions[1].padding_high, 3);
  EXPECT_EQ(w.dimensions[1].window_dilation, 2);
  EXPECT_TRUE(w.dimensions[1].window_reversal);
  EXPECT_FALSE(w.dimensions[0].window_reversal);
  EXPECT_EQ(c->feature_group_count(), 2);
  EXPECT_EQ(c->batch_group_count(), 2);
  EXPECT_EQ(c->operand_precision(0), Precision::kHigh);
  EXPECT_EQ(c->operand_precision(1), Precision::kHighest);
}

TEST(ParserTest, SlicePadDotGatherScatterCompareAndMisc) {
  auto m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[10,25] parameter(0)
  sl = f32[5,25] slice(p), slice={[0:10:2], [0:25]}
  z = f32[] constant(0)
  q = f32[12,28] pad(p, z), padding=1_1x0_2_1
  l = f32[3,4,5] parameter(1)
  r = f32[3,5,6] parameter(2)
  d = f32[3,4,6] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  i = s32[2,1] parameter(3)
  g = f32[2,25] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,25}, indices_are_sorted=true
  u = f32[2,25] parameter(4)
  sc = f32[10,25] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add, unique_indices=true
  c = pred[10,25] compare(p, p), direction=LT, type=TOTALORDER
  io = s32[4,8] iota(), iota_dimension=1
  ds = f32[1,25] dynamic-slice(p, i, i), dynamic_slice_sizes={1,25}
  rp = f32[10,25] reduce-precision(p), exponent_bits=8, mantissa_bits=7
  ROOT t = (f32[5,25], f32[12,28]) tuple(sl, q), sharding={{replicated}, {maximal device=1}}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* s = Find(*m, "sl");
  EXPECT_EQ(s->slice_starts(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(s->slice_limits(), (std::vector<int64_t>{10, 25}));
  EXPECT_EQ(s->slice_strides(), (std::vector<int64_t>{2, 1}));
  const PaddingConfig& pc = Find(*m, "q")->padding_config();
  ASSERT_EQ(pc.dimensions.size(), 2u);
  EXPECT_EQ(pc.dimensions[1].edge_padding_high, 2);
  EXPECT_EQ(pc.dimensions[1].interior_padding, 1);
  const DotDimensionNumbers& dd = Find(*m, "d")->dot_dimension_numbers();
  EXPECT_EQ(dd.lhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(dd.rhs_contracting_dimensions, (std::vector<int64_t>{1}));
  const HloInstruction* g = Find(*m, "g");
  EXPECT_EQ(g->gather_slice_sizes(), (std::vector<int64_t>{1, 25}));
  EXPECT_EQ(g->gather_dimension_numbers().index_vector_dim, 1);
  EXPECT_TRUE(g->indices_are_sorted());
  const HloInstruction* sc = Find(*m, "sc");
  EXPECT_EQ(sc->scatter_dimension_numbers().update_window_dims, (std::vector<int64_t>{1}));
  EXPECT_TRUE(sc->unique_indices());
  EXPECT_EQ(sc->to_apply()->name(), "add");
  EXPECT_EQ(Find(*m, "c")->comparison_direction(), ComparisonDirection::kLt);
  EXPECT_EQ(Find(*m, "c")->comparison_type(), ComparisonType::kTotalOrder);
  EXPECT_EQ(Find(*m, "io")->iota_dimension(), 1);
  EXPECT_EQ(Find(*m, "ds")->dynamic_slice_sizes(), (std::vector<int64_t>{1, 25}));
  EXPECT_EQ(Find(*m, "rp")->mantissa_bits(), 7);
  const auto& sh = Find(*m, "t")->sharding();
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->kind, HloSharding::Kind::kTuple);
  ASSERT_EQ(sh->tuple_elements.size(), 2u);
  EXPECT_EQ(sh->tuple_elements[1].kind, HloSharding::Kind::kMaximal);
  EXPECT_EQ(sh->tuple_elements[1].device, 1);
}

TEST(ParserTest, ShardingIotaForms) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[8,8] parameter(0), sharding={devices=[4,2]<=[2,4]T(1,0)}
  b = f32[8,8] parameter(1), sharding={devices=[2,2,2]<=[8] last_tile_dims={manual}}
  c = f32[8,8] parameter(2), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  d = f32[8,8] parameter(3), sharding={devices=[2,1]0,1 metadata={op_name="x"}}
  ROOT t = (f32[8,8]) tuple(a), sharding={{manual}}
}
)");
  ASSERT_NE(m, nullptr);
  const HloSharding& a = *Find(*m, "a")->sharding();
  EXPECT_EQ(a.kind, HloSharding::Kind::kTiled);
  EXPECT_TRUE(a.iota_form);
  EXPECT_EQ(a.tile_assignment_dims, (std::vector<int64_t>{4, 2}));
  // iota(8) reshaped to [2,4] = {{0,1,2,3},{4,5,6,7}}, transposed -> [4,2] =
  // {{0,4},{1,5},{2,6},{3,7}}.
  EXPECT_EQ(a.tile_assignment_devices, (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(a.ToString(), "{devices=[4,2]<=[2,4]T(1,0)}");
  const HloSharding& b = *Find(*m, "b")->sharding();
  EXPECT_EQ(b.tile_assignment_devices, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(b.last_tile_dims, (std::vector<std::string>{"manual"}));
  const HloSharding& c = *Find(*m, "c")->sharding();
  EXPECT_TRUE(c.last_tile_dim_replicate);
  EXPECT_EQ(c.tile_assignment_devices, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(Find(*m, "d")->sharding()->extra, "metadata={op_name=\"x\"}");
}

TEST(ParserTest, ReplicaGroupsExplicitEmptyAndIota) {
  auto m = Parse(R"(HloModule m, replica_count=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[8] parameter(0)
  a1 = f32[8] all-reduce(p), replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=add, channel_id=3, use_global_device_ids=true
  a2 = f32[8] all-reduce(p), replica_groups={}, to_apply=add
  a3 = f32[32] all-gather(p), replica_groups=[2,4]<=[8], dimensions={0}
  a4 = f32[16] all-gather(p), replica_groups=[4,2]<=[2,4]T(1,0), dimensions={0}
  cp = f32[8] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  ROOT t = (f32[8], f32[8], f32[32], f32[16], f32[8]) tuple(a1, a2, a3, a4, cp)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->replica_count(), 8);
  const HloInstruction* a1 = Find(*m, "a1");
  EXPECT_EQ(a1->channel_id(), 3);
  EXPECT_TRUE(a1->use_global_device_ids());
  auto g1 = ExpandReplicaGroups(a1->replica_groups(), 8);
  ASSERT_TRUE(g1.ok());
  EXPECT_EQ(*g1, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  auto g2 = ExpandReplicaGroups(Find(*m, "a2")->replica_groups(), 8);
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(*g2, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  auto g3 = ExpandReplicaGroups(Find(*m, "a3")->replica_groups(), 8);
  ASSERT_TRUE(g3.ok());
  EXPECT_EQ(*g3, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  auto g4 = ExpandReplicaGroups(Find(*m, "a4")->replica_groups(), 8);
  ASSERT_TRUE(g4.ok());
  EXPECT_EQ(*g4, (std::vector<std::vector<int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(Find(*m, "a4")->replica_groups().ToString(), "[4,2]<=[2,4]T(1,0)");
  EXPECT_FALSE(ExpandReplicaGroups(a1->replica_groups(), 4).ok());  // device 4..7 out of range
  EXPECT_EQ(Find(*m, "cp")->source_target_pairs(),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));
}

TEST(ParserTest, MetadataFrontendAttributesCustomCallAndUnknownAttributes) {
  auto m = Parse(
      R"(HloModule m, input_output_alias={ {0}: (0, {}, must-alias) }, alias_passthrough_params=true

ENTRY %e (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0), parameter_replication={false}
  ROOT %c = f32[2]{0} custom-call(f32[2]{0} %p), custom_call_target="AwsNeuronGelu", api_version=API_VERSION_TYPED_FFI, backend_config={"k": [1, 2]}, operand_layout_constraints={f32[2]{0}}, frontend_attributes={grad_x="false",neff_input_names="input4"}, metadata={op_type="Gelu" op_name="a/b\n c" source_file="x.py" source_line=10 source_end_line=12 stack_frame_id=3}, sparsity=L.1@2:4
}
// trailing comment

FileNames
1 "/home/user/model.py"
StackFrames
1 {file_location_id=1 parent_frame_id=0}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->input_output_alias(), "{ {0}: (0, {}, must-alias) }");
  ASSERT_EQ(m->other_attributes().size(), 1u);
  EXPECT_EQ(m->other_attributes()[0].first, "alias_passthrough_params");
  const HloInstruction* c = Find(*m, "c");
  EXPECT_EQ(c->custom_call_target(), "AwsNeuronGelu");
  EXPECT_EQ(c->custom_call_api_version(), "API_VERSION_TYPED_FFI");
  EXPECT_TRUE(c->backend_config_is_braced());
  EXPECT_EQ(c->backend_config(), "{\"k\": [1, 2]}");
  ASSERT_NE(c->FindRawAttribute("operand_layout_constraints"), nullptr);
  EXPECT_EQ(*c->FindRawAttribute("operand_layout_constraints"), "{f32[2]{0}}");
  ASSERT_NE(c->FindRawAttribute("sparsity"), nullptr);
  EXPECT_EQ(*c->FindRawAttribute("sparsity"), "L.1@2:4");
  EXPECT_EQ(c->frontend_attributes().size(), 2u);
  EXPECT_EQ(c->frontend_attributes()[1].second, "input4");
  EXPECT_EQ(c->metadata().op_type, "Gelu");
  EXPECT_EQ(c->metadata().op_name, "a/b\n c");
  EXPECT_EQ(c->metadata().source_line, 10);
  ASSERT_EQ(c->metadata().other.size(), 2u);
  EXPECT_EQ(c->metadata().other[0].first, "source_end_line");
  EXPECT_EQ(*Find(*m, "p")->FindRawAttribute("parameter_replication"), "{false}");
}

// The opcodes XLA added after tpusim's first table (xla/hlo/ir/hlo_opcode.h): each parses with
// the attributes XLA writes, keeps them through a print, and takes its written result shape.
TEST(ParserTest, CollectiveReduceScaledDotScanShuffleAndMulhi) {
  auto m = Parse(R"(HloModule m, replica_count=2

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

step {
  x = f32[4] parameter(0)
  c = f32[4] parameter(1)
  s = f32[4] add(x, c)
  ROOT t = (f32[4], f32[4]) tuple(s, s)
}

ENTRY e {
  p = f32[2,4] parameter(0)
  cr = f32[2,4] collective-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, has_dynamic_root=false, to_apply=add
  lhs = bf16[2,4] parameter(1)
  rhs = bf16[4,4] parameter(2)
  ls = bf16[2,1] parameter(3)
  rs = bf16[1,4] parameter(4)
  sd = f32[2,4] scaled-dot(lhs, rhs, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[4] parameter(5)
  sc = (f32[2,4], f32[4]) scan(p, z), dimensions={0}, num_carries=1, to_apply=step, is_reverse=true, is_associative=true
  sh = f32[2,4] shuffle(p), dimensions={1}, mode=rotate, shifts={1}
  i = s32[2,4] parameter(6)
  mh = s32[2,4] mulhi(i, i)
  ROOT t = (f32[2,4], f32[2,4], (f32[2,4], f32[4]), f32[2,4], s32[2,4]) tuple(cr, sd, sc, sh, mh)
})");
  ASSERT_NE(m, nullptr);
  const HloInstruction* cr = Find(*m, "cr");
  EXPECT_EQ(cr->opcode(), HloOpcode::kCollectiveReduce);
  EXPECT_EQ(cr->channel_id(), 1);
  ASSERT_NE(cr->FindRawAttribute("has_dynamic_root"), nullptr);
  EXPECT_EQ(*cr->FindRawAttribute("has_dynamic_root"), "false");
  const HloInstruction* sd = Find(*m, "sd");
  EXPECT_EQ(sd->operand_count(), 4);
  EXPECT_EQ(sd->dot_dimension_numbers().lhs_contracting_dimensions, std::vector<int64_t>{1});
  EXPECT_EQ(sd->shape().ToString(false), "f32[2,4]");
  const HloInstruction* sc = Find(*m, "sc");
  EXPECT_EQ(sc->dimensions(), std::vector<int64_t>{0});
  EXPECT_EQ(*sc->FindRawAttribute("num_carries"), "1");
  EXPECT_EQ(*sc->FindRawAttribute("is_reverse"), "true");
  EXPECT_EQ(*sc->FindRawAttribute("is_associative"), "true");
  const HloInstruction* sh = Find(*m, "sh");
  EXPECT_EQ(*sh->FindRawAttribute("mode"), "rotate");
  EXPECT_EQ(*sh->FindRawAttribute("shifts"), "{1}");
  EXPECT_EQ(Find(*m, "mh")->opcode(), HloOpcode::kMulhi);
}

TEST(ParserTest, ControlFlowAndFusion) {
  auto m = Parse(R"(HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(s), index=1
  ROOT t = (s32[], f32[4]) tuple(j, x)
}
fused {
  a = f32[4] parameter(0)
  ROOT e = f32[4] exponential(a)
}
b0 {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
b1 {
  a = f32[4] parameter(0)
  ROOT n = f32[4] abs(a)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"10"}}
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  pr = pred[] constant(true)
  c1 = f32[4] conditional(pr, p, f), true_computation=b0, false_computation=b1
  k = s32[] constant(1)
  c2 = f32[4] conditional(k, p, f), branch_computations={b0, b1}
  ROOT r = f32[4] call(c2), to_apply=b0
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* w = Find(*m, "w");
  EXPECT_EQ(w->while_condition()->name(), "cond");
  EXPECT_EQ(w->while_body()->name(), "body");
  const HloInstruction* f = Find(*m, "f");
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  ASSERT_NE(f->called_computation(), nullptr);
  EXPECT_EQ(f->called_computation()->name(), "fused");
  ASSERT_EQ(Find(*m, "c1")->branch_computations().size(), 2u);
  EXPECT_EQ(Find(*m, "c1")->branch_computations()[1]->name(), "b1");
  EXPECT_EQ(Find(*m, "c2")->branch_computations()[0]->name(), "b0");
  EXPECT_EQ(Find(*m, "r")->to_apply()->name(), "b0");
  EXPECT_EQ(m->MakeComputationPostOrder().back()->name(), "e");
}

}  // namespace
}  // namespace tpusim::hlo
