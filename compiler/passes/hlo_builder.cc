#include "compiler/passes/hlo_builder.h"

#include <algorithm>

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

std::string HloBuilder::UniqueName(const std::string& base) const {
  return comp_->UniqueName(base);
}

HloInstruction* HloBuilder::Add(std::unique_ptr<HloInstruction> inst) {
  inst->set_location(anchor_->location());
  inst->mutable_metadata() = anchor_->metadata();
  return comp_->AddInstructionBefore(std::move(inst), anchor_);
}

HloInstruction* HloBuilder::ScalarConstant(hlo::PrimitiveType type, double value,
                                           const std::string& suffix) {
  auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant, Shape::Scalar(type),
                                            UniqueName(anchor_->name() + "." + suffix));
  if (hlo::IsFloatingPoint(type)) {
    c->mutable_literal().float_values = {value};
  } else {
    c->mutable_literal().int_values = {static_cast<int64_t>(value)};
  }
  return Add(std::move(c));
}

HloInstruction* HloBuilder::Broadcast(HloInstruction* operand, const Shape& shape,
                                      std::vector<int64_t> dimensions, const std::string& suffix) {
  auto b = std::make_unique<HloInstruction>(
      HloOpcode::kBroadcast, Shape(operand->shape().element_type(), shape.dimensions()),
      UniqueName(anchor_->name() + "." + suffix));
  b->mutable_dimensions() = std::move(dimensions);
  b->set_has_dimensions(true);
  b->AppendOperand(operand);
  return Add(std::move(b));
}

HloInstruction* HloBuilder::Splat(const Shape& shape, double value, const std::string& suffix,
                                  const std::string& broadcast_suffix) {
  return Broadcast(ScalarConstant(shape.element_type(), value, suffix), shape, {},
                   broadcast_suffix.empty() ? suffix : broadcast_suffix);
}

HloInstruction* HloBuilder::SplatInt(const Shape& shape, int64_t value, const std::string& suffix,
                                     const std::string& broadcast_suffix) {
  HloInstruction* c = ScalarConstant(shape.element_type(), 0, suffix);
  c->mutable_literal().int_values = {value};
  return Broadcast(c, shape, {}, broadcast_suffix.empty() ? suffix : broadcast_suffix);
}

HloInstruction* HloBuilder::Unary(HloOpcode op, HloInstruction* x, const std::string& suffix) {
  auto u = std::make_unique<HloInstruction>(
      op, Shape(x->shape().element_type(), x->shape().dimensions()),
      UniqueName(anchor_->name() + "." + suffix));
  u->AppendOperand(x);
  return Add(std::move(u));
}

HloInstruction* HloBuilder::Retype(HloOpcode op, HloInstruction* x, hlo::PrimitiveType type,
                                   const std::string& suffix) {
  auto c = std::make_unique<HloInstruction>(op, Shape(type, x->shape().dimensions()),
                                            UniqueName(anchor_->name() + "." + suffix));
  c->AppendOperand(x);
  return Add(std::move(c));
}

HloInstruction* HloBuilder::Convert(HloInstruction* x, hlo::PrimitiveType type,
                                    const std::string& suffix) {
  return Retype(HloOpcode::kConvert, x, type, suffix);
}

HloInstruction* HloBuilder::BitcastConvert(HloInstruction* x, hlo::PrimitiveType type,
                                           const std::string& suffix) {
  return Retype(HloOpcode::kBitcastConvert, x, type, suffix);
}

HloInstruction* HloBuilder::Binary(HloOpcode op, HloInstruction* a, HloInstruction* b,
                                   const std::string& suffix) {
  auto u = std::make_unique<HloInstruction>(
      op, Shape(a->shape().element_type(), a->shape().dimensions()),
      UniqueName(anchor_->name() + "." + suffix));
  u->AppendOperand(a);
  u->AppendOperand(b);
  return Add(std::move(u));
}

HloInstruction* HloBuilder::Compare(HloInstruction* a, HloInstruction* b,
                                    hlo::ComparisonDirection d, const std::string& suffix) {
  auto c = std::make_unique<HloInstruction>(
      HloOpcode::kCompare, Shape(hlo::PrimitiveType::kPred, a->shape().dimensions()),
      UniqueName(anchor_->name() + "." + suffix));
  c->set_comparison_direction(d);
  c->AppendOperand(a);
  c->AppendOperand(b);
  return Add(std::move(c));
}

HloInstruction* HloBuilder::Select(HloInstruction* p, HloInstruction* on_true,
                                   HloInstruction* on_false, const std::string& suffix) {
  auto s = std::make_unique<HloInstruction>(HloOpcode::kSelect, on_true->shape(),
                                            UniqueName(anchor_->name() + "." + suffix));
  s->AppendOperand(p);
  s->AppendOperand(on_true);
  s->AppendOperand(on_false);
  return Add(std::move(s));
}

HloInstruction* HloBuilder::Reduce(HloInstruction* x, HloInstruction* init,
                                   std::vector<int64_t> dims, hlo::HloComputation* reducer,
                                   const std::string& suffix) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end())
      out.push_back(x->shape().dimensions(d));
  }
  auto r =
      std::make_unique<HloInstruction>(HloOpcode::kReduce, Shape(x->shape().element_type(), out),
                                       UniqueName(anchor_->name() + "." + suffix));
  r->mutable_dimensions() = std::move(dims);
  r->set_has_dimensions(true);
  r->set_to_apply(reducer);
  r->AppendOperand(x);
  r->AppendOperand(init);
  return Add(std::move(r));
}

HloInstruction* HloBuilder::Tuple(const std::vector<HloInstruction*>& elements,
                                  const std::string& suffix) {
  std::vector<Shape> shapes;
  for (const HloInstruction* e : elements) shapes.push_back(e->shape());
  auto t = std::make_unique<HloInstruction>(HloOpcode::kTuple, Shape::Tuple(shapes),
                                            UniqueName(anchor_->name() + "." + suffix));
  for (HloInstruction* e : elements) t->AppendOperand(e);
  return Add(std::move(t));
}

HloInstruction* HloBuilder::Pad(HloInstruction* x, HloInstruction* value,
                                const hlo::PaddingConfig& config, const std::string& suffix) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x->shape().rank(); ++i) {
    const auto& p = config.dimensions[static_cast<size_t>(i)];
    const int64_t d = x->shape().dimensions(i);
    dims.push_back(d + p.edge_padding_low + p.edge_padding_high +
                   std::max<int64_t>(0, d - 1) * p.interior_padding);
  }
  auto p = std::make_unique<HloInstruction>(HloOpcode::kPad, Shape(x->shape().element_type(), dims),
                                            UniqueName(anchor_->name() + "." + suffix));
  p->mutable_padding_config() = config;
  p->AppendOperand(x);
  p->AppendOperand(value);
  return Add(std::move(p));
}

HloInstruction* HloBuilder::Slice(HloInstruction* x, const std::vector<int64_t>& start,
                                  const std::vector<int64_t>& limit,
                                  const std::vector<int64_t>& step, const std::string& suffix) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < start.size(); ++i) {
    dims.push_back((limit[i] - start[i] + step[i] - 1) / step[i]);
  }
  auto s =
      std::make_unique<HloInstruction>(HloOpcode::kSlice, Shape(x->shape().element_type(), dims),
                                       UniqueName(anchor_->name() + "." + suffix));
  s->mutable_slice_starts() = start;
  s->mutable_slice_limits() = limit;
  s->mutable_slice_strides() = step;
  s->AppendOperand(x);
  return Add(std::move(s));
}

HloInstruction* HloBuilder::Transpose(HloInstruction* x, const std::vector<int64_t>& perm,
                                      const std::string& suffix) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x->shape().dimensions(p));
  auto t = std::make_unique<HloInstruction>(HloOpcode::kTranspose,
                                            Shape(x->shape().element_type(), dims),
                                            UniqueName(anchor_->name() + "." + suffix));
  t->mutable_dimensions() = perm;
  t->set_has_dimensions(true);
  t->AppendOperand(x);
  return Add(std::move(t));
}

HloInstruction* HloBuilder::Reshape(HloInstruction* x, const std::vector<int64_t>& dims,
                                    const std::string& suffix) {
  auto r =
      std::make_unique<HloInstruction>(HloOpcode::kReshape, Shape(x->shape().element_type(), dims),
                                       UniqueName(anchor_->name() + "." + suffix));
  r->AppendOperand(x);
  return Add(std::move(r));
}

HloInstruction* HloBuilder::Concatenate(const std::vector<HloInstruction*>& parts, int64_t dim,
                                        const std::string& suffix) {
  std::vector<int64_t> dims = parts[0]->shape().dimensions();
  dims[static_cast<size_t>(dim)] = 0;
  for (const HloInstruction* p : parts)
    dims[static_cast<size_t>(dim)] += p->shape().dimensions(dim);
  auto c = std::make_unique<HloInstruction>(HloOpcode::kConcatenate,
                                            Shape(parts[0]->shape().element_type(), dims),
                                            UniqueName(anchor_->name() + "." + suffix));
  c->mutable_dimensions() = {dim};
  c->set_has_dimensions(true);
  for (HloInstruction* p : parts) c->AppendOperand(p);
  return Add(std::move(c));
}

HloInstruction* HloBuilder::DynamicSlice(HloInstruction* x,
                                         const std::vector<HloInstruction*>& starts,
                                         const std::vector<int64_t>& sizes,
                                         const std::string& suffix) {
  auto d = std::make_unique<HloInstruction>(HloOpcode::kDynamicSlice,
                                            Shape(x->shape().element_type(), sizes),
                                            UniqueName(anchor_->name() + "." + suffix));
  d->mutable_dynamic_slice_sizes() = sizes;
  d->AppendOperand(x);
  for (HloInstruction* s : starts) d->AppendOperand(s);
  return Add(std::move(d));
}

HloInstruction* HloBuilder::DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                               const std::vector<HloInstruction*>& starts,
                                               const std::string& suffix) {
  auto d = std::make_unique<HloInstruction>(
      HloOpcode::kDynamicUpdateSlice, Shape(x->shape().element_type(), x->shape().dimensions()),
      UniqueName(anchor_->name() + "." + suffix));
  d->AppendOperand(x);
  d->AppendOperand(update);
  for (HloInstruction* s : starts) d->AppendOperand(s);
  return Add(std::move(d));
}

hlo::HloComputation* GetOrAddScalarAdd(hlo::HloModule& module, hlo::PrimitiveType type) {
  return GetOrAddScalarBinary(module, type, HloOpcode::kAdd);
}

hlo::HloComputation* GetOrAddScalarBinary(hlo::HloModule& module, hlo::PrimitiveType type,
                                          HloOpcode op) {
  const std::string name = "tpusim." + std::string(hlo::HloOpcodeString(op)) + "." +
                           std::string(hlo::PrimitiveTypeName(type));
  if (hlo::HloComputation* c = module.FindComputation(name)) return c;
  auto comp = std::make_unique<hlo::HloComputation>(name);
  auto x = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape::Scalar(type), "x");
  x->set_parameter_number(0);
  auto y = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape::Scalar(type), "y");
  y->set_parameter_number(1);
  HloInstruction* px = comp->AddInstruction(std::move(x));
  HloInstruction* py = comp->AddInstruction(std::move(y));
  auto root = std::make_unique<HloInstruction>(op, Shape::Scalar(type),
                                               op == HloOpcode::kAdd ? "sum" : "result");
  root->AppendOperand(px);
  root->AppendOperand(py);
  comp->set_root_instruction(comp->AddInstruction(std::move(root)));
  // Callees go before their callers in the text: keep the entry last.
  hlo::HloComputation* raw = module.AddComputation(std::move(comp));
  return raw;
}

std::unique_ptr<HloInstruction> CloneInstruction(const HloInstruction& in,
                                                 const std::vector<HloInstruction*>& operands,
                                                 const std::string& name) {
  return CloneInstructionAs(in, in.opcode(), in.shape(), operands, name);
}

std::unique_ptr<HloInstruction> CloneInstructionAs(const HloInstruction& in, HloOpcode opcode,
                                                   const Shape& shape,
                                                   const std::vector<HloInstruction*>& operands,
                                                   const std::string& name) {
  auto c = std::make_unique<HloInstruction>(opcode, shape, name);
  for (HloInstruction* op : operands) c->AppendOperand(op);
  c->set_location(in.location());
  c->set_to_apply(in.to_apply());
  c->set_while_condition(in.while_condition());
  c->set_while_body(in.while_body());
  c->set_select(in.select());
  c->set_scatter(in.scatter());
  c->mutable_calls() = in.calls();
  c->mutable_branch_computations() = in.branch_computations();
  c->set_parameter_number(in.parameter_number());
  c->set_tuple_index(in.tuple_index());
  c->set_iota_dimension(in.iota_dimension());
  c->mutable_dimensions() = in.dimensions();
  c->set_has_dimensions(in.has_dimensions());
  c->mutable_dot_dimension_numbers() = in.dot_dimension_numbers();
  c->mutable_precision_config() = in.precision_config();
  c->mutable_window() = in.window();
  c->set_has_window(in.has_window());
  c->mutable_convolution_dimension_numbers() = in.convolution_dimension_numbers();
  c->set_has_convolution_dimension_numbers(in.has_convolution_dimension_numbers());
  c->set_feature_group_count(in.feature_group_count());
  c->set_batch_group_count(in.batch_group_count());
  c->mutable_slice_starts() = in.slice_starts();
  c->mutable_slice_limits() = in.slice_limits();
  c->mutable_slice_strides() = in.slice_strides();
  c->mutable_dynamic_slice_sizes() = in.dynamic_slice_sizes();
  c->mutable_padding_config() = in.padding_config();
  c->mutable_gather_dimension_numbers() = in.gather_dimension_numbers();
  c->mutable_gather_slice_sizes() = in.gather_slice_sizes();
  c->mutable_scatter_dimension_numbers() = in.scatter_dimension_numbers();
  c->set_indices_are_sorted(in.indices_are_sorted());
  c->set_unique_indices(in.unique_indices());
  c->set_comparison_direction(in.comparison_direction());
  c->set_comparison_type(in.comparison_type());
  c->mutable_literal() = in.literal();
  c->set_custom_call_target(in.custom_call_target());
  c->set_backend_config(in.backend_config(), in.backend_config_is_braced());
  c->set_custom_call_api_version(in.custom_call_api_version());
  c->mutable_replica_groups() = in.replica_groups();
  c->set_has_replica_groups(in.has_replica_groups());
  c->set_channel_id(in.channel_id());
  c->set_use_global_device_ids(in.use_global_device_ids());
  c->set_constrain_layout(in.constrain_layout());
  c->mutable_source_target_pairs() = in.source_target_pairs();
  c->set_sharding(in.sharding());
  c->mutable_metadata() = in.metadata();
  c->mutable_frontend_attributes() = in.frontend_attributes();
  c->set_fusion_kind(in.fusion_kind());
  c->set_distribution(in.distribution());
  c->set_rng_algorithm(in.rng_algorithm());
  c->set_epsilon(in.epsilon());
  c->set_feature_index(in.feature_index());
  c->set_is_stable(in.is_stable());
  c->set_exponent_bits(in.exponent_bits());
  c->set_mantissa_bits(in.mantissa_bits());
  c->set_fft_type(in.fft_type());
  c->mutable_fft_length() = in.fft_length();
  c->mutable_raw_attributes() = in.raw_attributes();
  return c;
}

}  // namespace tpusim::compiler
