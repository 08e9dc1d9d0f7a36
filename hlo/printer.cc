#include "hlo/printer.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

namespace tpusim::hlo {
namespace {

std::string JoinInts(const std::vector<int64_t>& v, std::string_view sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

std::string Braced(const std::vector<int64_t>& v) { return fmt::format("{{{}}}", JoinInts(v)); }

// A C-escaped, double-quoted string (the lexer reads the same escapes back).
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string FormatDouble(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return fmt::format("{}", v);
}

// Values of one array leaf, nested per dimension.
class LeafPrinter {
 public:
  LeafPrinter(const LiteralValues& lit, const Shape& shape) : lit_(lit), shape_(shape) {}

  std::string Print() {
    if (lit_.elided) return "{...}";
    if (shape_.rank() == 0) return Value(0);
    std::string out;
    // Iterative nesting over dims: an odometer over the index, opening/closing braces as digits
    // roll.
    const int64_t rank = shape_.rank();
    const int64_t total = shape_.ElementCount();
    if (total != Count()) {
      // Not the shape's element count (only possible for modules built in code): print flat.
      out = "{";
      for (int64_t i = 0; i < Count(); ++i) out += (i ? ", " : "") + Value(i);
      return out + "}";
    }
    if (total == 0) {
      // Print the nesting up to the first zero dimension.
      int64_t depth = 0;
      while (depth < rank && shape_.dimensions(depth) != 0) ++depth;
      std::string inner = "{}";
      for (int64_t d = depth - 1; d >= 0; --d) {
        std::string level = "{ ";
        for (int64_t i = 0; i < shape_.dimensions(d); ++i) level += (i ? ", " : "") + inner;
        inner = level + " }";
      }
      return inner;
    }
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t d = 0; d < rank; ++d) out += (rank > 1 && d < rank - 1) ? "{ " : "{";
    for (int64_t i = 0; i < total; ++i) {
      out += Value(i);
      // Advance the odometer.
      int64_t d = rank - 1;
      int64_t closed = 0;
      while (d >= 0) {
        if (++idx[static_cast<size_t>(d)] < shape_.dimensions(d)) break;
        idx[static_cast<size_t>(d)] = 0;
        ++closed;
        --d;
      }
      for (int64_t c = 0; c < closed; ++c) {
        const int64_t level = rank - 1 - c;
        out += (level == rank - 1) ? "}" : " }";
      }
      if (d >= 0) {
        out += ", ";
        for (int64_t c = closed; c > 0; --c) {
          const int64_t level = rank - c;
          out += (level < rank - 1) ? "{ " : "{";
        }
      }
    }
    return out;
  }

 private:
  int64_t Count() const {
    return static_cast<int64_t>(IsComplex(shape_.element_type()) ? lit_.float_values.size() / 2
                                : IsFloatingPoint(shape_.element_type()) ? lit_.float_values.size()
                                                                         : lit_.int_values.size());
  }
  std::string Value(int64_t i) const {
    const PrimitiveType t = shape_.element_type();
    const size_t k = static_cast<size_t>(i);
    if (IsComplex(t)) {
      if (2 * k + 1 >= lit_.float_values.size()) return "0";
      return fmt::format("({}, {})", FormatDouble(lit_.float_values[2 * k]),
                         FormatDouble(lit_.float_values[2 * k + 1]));
    }
    if (IsFloatingPoint(t)) {
      return k < lit_.float_values.size() ? FormatDouble(lit_.float_values[k]) : "0";
    }
    if (k >= lit_.int_values.size()) return "0";
    const int64_t v = lit_.int_values[k];
    if (t == PrimitiveType::kPred) return v ? "true" : "false";
    if (IsUnsignedInteger(t)) return std::to_string(static_cast<uint64_t>(v));
    return std::to_string(v);
  }

  const LiteralValues& lit_;
  const Shape& shape_;
};

void AppendAttr(std::string& out, std::string_view name, std::string_view value) {
  out += ", ";
  out += name;
  out += "=";
  out += value;
}

std::string WindowToString(const Window& w) {
  std::vector<int64_t> size, stride, lhs, rhs;
  bool any_stride = false, any_pad = false, any_lhs = false, any_rhs = false, any_rev = false;
  std::string pad, rev;
  for (size_t i = 0; i < w.dimensions.size(); ++i) {
    const WindowDimension& d = w.dimensions[i];
    size.push_back(d.size);
    stride.push_back(d.stride);
    lhs.push_back(d.base_dilation);
    rhs.push_back(d.window_dilation);
    any_stride |= d.stride != 1;
    any_pad |= d.padding_low != 0 || d.padding_high != 0;
    any_lhs |= d.base_dilation != 1;
    any_rhs |= d.window_dilation != 1;
    any_rev |= d.window_reversal;
    if (i) pad += "x", rev += "x";
    pad += std::to_string(d.padding_low) + "_" + std::to_string(d.padding_high);
    rev += d.window_reversal ? "1" : "0";
  }
  std::string s = "{";
  if (!w.dimensions.empty()) s += fmt::format("size={}", JoinInts(size, "x"));
  if (any_stride) s += fmt::format(" stride={}", JoinInts(stride, "x"));
  if (any_pad) s += " pad=" + pad;
  if (any_lhs) s += fmt::format(" lhs_dilate={}", JoinInts(lhs, "x"));
  if (any_rhs) s += fmt::format(" rhs_dilate={}", JoinInts(rhs, "x"));
  if (any_rev) s += " rhs_reversal=" + rev;
  return s + "}";
}

// dim_labels: for each of input/kernel/output, the character of each dimension position.
std::string DimLabels(const ConvolutionDimensionNumbers& d) {
  auto side = [](int64_t rank, int64_t a, char ca, int64_t b, char cb,
                 const std::vector<int64_t>& spatial) {
    std::string s(static_cast<size_t>(rank), '?');
    auto put = [&](int64_t pos, char c) {
      if (pos >= 0 && pos < rank) s[static_cast<size_t>(pos)] = c;
    };
    put(a, ca);
    put(b, cb);
    for (size_t k = 0; k < spatial.size(); ++k) put(spatial[k], static_cast<char>('0' + k));
    return s;
  };
  const int64_t rank = static_cast<int64_t>(d.input_spatial_dimensions.size()) + 2;
  return side(rank, d.input_batch_dimension, 'b', d.input_feature_dimension, 'f',
              d.input_spatial_dimensions) +
         "_" +
         side(rank, d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
              d.kernel_spatial_dimensions) +
         "->" +
         side(rank, d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
              d.output_spatial_dimensions);
}

std::string ComputationRef(const HloComputation* c) { return c ? "%" + c->name() : "%<null>"; }

std::string ComputationList(const std::vector<HloComputation*>& cs) {
  std::string s = "{";
  for (size_t i = 0; i < cs.size(); ++i) s += (i ? ", " : "") + ComputationRef(cs[i]);
  return s + "}";
}

// Dimensions, windows, dimension numbers, precision, slices and padding.
void AppendIndexingAttributes(const HloInstruction& inst, std::string& out) {
  const HloOpcode op = inst.opcode();
  if (inst.has_dimensions()) AppendAttr(out, "dimensions", Braced(inst.dimensions()));
  if (inst.has_window()) AppendAttr(out, "window", WindowToString(inst.window()));
  if (inst.has_convolution_dimension_numbers()) {
    AppendAttr(out, "dim_labels", DimLabels(inst.convolution_dimension_numbers()));
  }
  if (inst.feature_group_count() != 1) {
    AppendAttr(out, "feature_group_count", std::to_string(inst.feature_group_count()));
  }
  if (inst.batch_group_count() != 1) {
    AppendAttr(out, "batch_group_count", std::to_string(inst.batch_group_count()));
  }
  if (op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kScaledDot) {
    const DotDimensionNumbers& d = inst.dot_dimension_numbers();
    if (!d.lhs_batch_dimensions.empty()) {
      AppendAttr(out, "lhs_batch_dims", Braced(d.lhs_batch_dimensions));
    }
    AppendAttr(out, "lhs_contracting_dims", Braced(d.lhs_contracting_dimensions));
    if (!d.rhs_batch_dimensions.empty()) {
      AppendAttr(out, "rhs_batch_dims", Braced(d.rhs_batch_dimensions));
    }
    AppendAttr(out, "rhs_contracting_dims", Braced(d.rhs_contracting_dimensions));
  }
  const PrecisionConfig& pc = inst.precision_config();
  if (!pc.operand_precision.empty()) {
    std::string s = "{";
    for (size_t i = 0; i < pc.operand_precision.size(); ++i) {
      if (i) s += ",";
      s += PrecisionName(pc.operand_precision[i]);
    }
    AppendAttr(out, "operand_precision", s + "}");
  }
  if (!pc.algorithm.empty()) AppendAttr(out, "algorithm", pc.algorithm);
  if (op == HloOpcode::kSlice) {
    std::string s = "{";
    for (size_t i = 0; i < inst.slice_starts().size(); ++i) {
      s += (i ? ", [" : "[") + std::to_string(inst.slice_starts()[i]) + ":" +
           std::to_string(inst.slice_limits()[i]);
      if (inst.slice_strides()[i] != 1) s += fmt::format(":{}", inst.slice_strides()[i]);
      s += "]";
    }
    AppendAttr(out, "slice", s + "}");
  }
  if (op == HloOpcode::kDynamicSlice) {
    AppendAttr(out, "dynamic_slice_sizes", Braced(inst.dynamic_slice_sizes()));
  }
  if (op == HloOpcode::kPad) {
    std::string s;
    const auto& dims = inst.padding_config().dimensions;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) s += "x";
      s += std::to_string(dims[i].edge_padding_low) + "_" +
           std::to_string(dims[i].edge_padding_high);
      if (dims[i].interior_padding != 0) s += fmt::format("_{}", dims[i].interior_padding);
    }
    AppendAttr(out, "padding", s);
  }
  if (op == HloOpcode::kGather) {
    const GatherDimensionNumbers& g = inst.gather_dimension_numbers();
    AppendAttr(out, "offset_dims", Braced(g.offset_dims));
    AppendAttr(out, "collapsed_slice_dims", Braced(g.collapsed_slice_dims));
    AppendAttr(out, "start_index_map", Braced(g.start_index_map));
    if (!g.operand_batching_dims.empty()) {
      AppendAttr(out, "operand_batching_dims", Braced(g.operand_batching_dims));
    }
    if (!g.start_indices_batching_dims.empty()) {
      AppendAttr(out, "start_indices_batching_dims", Braced(g.start_indices_batching_dims));
    }
    AppendAttr(out, "index_vector_dim", std::to_string(g.index_vector_dim));
    AppendAttr(out, "slice_sizes", Braced(inst.gather_slice_sizes()));
  }
  if (op == HloOpcode::kScatter) {
    const ScatterDimensionNumbers& s = inst.scatter_dimension_numbers();
    AppendAttr(out, "update_window_dims", Braced(s.update_window_dims));
    AppendAttr(out, "inserted_window_dims", Braced(s.inserted_window_dims));
    AppendAttr(out, "scatter_dims_to_operand_dims", Braced(s.scatter_dims_to_operand_dims));
    if (!s.input_batching_dims.empty()) {
      AppendAttr(out, "input_batching_dims", Braced(s.input_batching_dims));
    }
    if (!s.scatter_indices_batching_dims.empty()) {
      AppendAttr(out, "scatter_indices_batching_dims", Braced(s.scatter_indices_batching_dims));
    }
    AppendAttr(out, "index_vector_dim", std::to_string(s.index_vector_dim));
  }
  if (inst.indices_are_sorted()) AppendAttr(out, "indices_are_sorted", "true");
  if (inst.unique_indices()) AppendAttr(out, "unique_indices", "true");
}

// The attributes of one opcode (comparison, tuple index, iota, fusion kind, rng, batch-norm, sort,
// reduce-precision).
void AppendOpAttributes(const HloInstruction& inst, std::string& out) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kCompare) {
    AppendAttr(out, "direction", ComparisonDirectionName(inst.comparison_direction()));
    if (inst.comparison_type() != ComparisonType::kDefault) {
      AppendAttr(out, "type", ComparisonTypeName(inst.comparison_type()));
    }
  }
  if (op == HloOpcode::kGetTupleElement)
    AppendAttr(out, "index", std::to_string(inst.tuple_index()));
  if (op == HloOpcode::kIota) {
    AppendAttr(out, "iota_dimension", std::to_string(inst.iota_dimension()));
  }
  if (op == HloOpcode::kFusion) AppendAttr(out, "kind", FusionKindName(inst.fusion_kind()));
  if (op == HloOpcode::kRng)
    AppendAttr(out, "distribution", RandomDistributionName(inst.distribution()));
  if (op == HloOpcode::kRngBitGenerator) {
    AppendAttr(out, "algorithm", RandomAlgorithmName(inst.rng_algorithm()));
  }
  if (op == HloOpcode::kBatchNormGrad || op == HloOpcode::kBatchNormInference ||
      op == HloOpcode::kBatchNormTraining) {
    AppendAttr(out, "epsilon", fmt::format("{}", inst.epsilon()));
    AppendAttr(out, "feature_index", std::to_string(inst.feature_index()));
  }
  if (inst.is_stable()) AppendAttr(out, "is_stable", "true");
  if (op == HloOpcode::kReducePrecision) {
    AppendAttr(out, "exponent_bits", std::to_string(inst.exponent_bits()));
    AppendAttr(out, "mantissa_bits", std::to_string(inst.mantissa_bits()));
  }
  if (op == HloOpcode::kFft) {
    AppendAttr(out, "fft_type", FftTypeName(inst.fft_type()));
    AppendAttr(out, "fft_length", fmt::format("{{{}}}", fmt::join(inst.fft_length(), ",")));
  }
}

// Replica groups, channels and source-target pairs.
void AppendCollectiveAttributes(const HloInstruction& inst, std::string& out) {
  const HloOpcode op = inst.opcode();
  if (inst.has_replica_groups())
    AppendAttr(out, "replica_groups", inst.replica_groups().ToString());
  if (inst.channel_id().has_value())
    AppendAttr(out, "channel_id", std::to_string(*inst.channel_id()));
  if (inst.use_global_device_ids()) AppendAttr(out, "use_global_device_ids", "true");
  if (inst.constrain_layout()) AppendAttr(out, "constrain_layout", "true");
  if (op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart) {
    std::string s = "{";
    for (size_t i = 0; i < inst.source_target_pairs().size(); ++i) {
      // (Appended in two steps: GCC 12 reports a false -Wrestrict on `"," + string&&` here.)
      if (i) s += ",";
      s += fmt::format("{{{},{}}}", inst.source_target_pairs()[i].first,
                       inst.source_target_pairs()[i].second);
    }
    AppendAttr(out, "source_target_pairs", s + "}");
  }
}

// The called computations (to_apply, condition, body, select, scatter, calls, branches).
void AppendCalledComputations(const HloInstruction& inst, std::string& out) {
  const HloOpcode op = inst.opcode();
  if (inst.to_apply()) AppendAttr(out, "to_apply", ComputationRef(inst.to_apply()));
  if (inst.while_condition()) AppendAttr(out, "condition", ComputationRef(inst.while_condition()));
  if (inst.while_body()) AppendAttr(out, "body", ComputationRef(inst.while_body()));
  if (inst.select()) AppendAttr(out, "select", ComputationRef(inst.select()));
  if (inst.scatter()) AppendAttr(out, "scatter", ComputationRef(inst.scatter()));
  if (!inst.calls().empty()) {
    if (op == HloOpcode::kCustomCall) {
      AppendAttr(out, "called_computations", ComputationList(inst.calls()));
    } else {
      AppendAttr(out, "calls",
                 inst.calls().size() == 1 ? ComputationRef(inst.calls()[0])
                                          : ComputationList(inst.calls()));
    }
  }
  if (!inst.branch_computations().empty()) {
    const auto& b = inst.branch_computations();
    const bool pred = inst.operand_count() > 0 &&
                      inst.operand(0)->shape().element_type() == PrimitiveType::kPred &&
                      b.size() == 2;
    if (pred) {
      AppendAttr(out, "true_computation", ComputationRef(b[0]));
      AppendAttr(out, "false_computation", ComputationRef(b[1]));
    } else {
      AppendAttr(out, "branch_computations", ComputationList(b));
    }
  }
}

// Custom-call target and API version, sharding, raw attributes, frontend attributes, metadata and
// backend config.
void AppendBackendAttributes(const HloInstruction& inst, std::string& out) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kCustomCall) {
    AppendAttr(out, "custom_call_target", Quote(inst.custom_call_target()));
  }
  if (!inst.custom_call_api_version().empty()) {
    AppendAttr(out, "api_version", inst.custom_call_api_version());
  }
  if (inst.sharding().has_value()) AppendAttr(out, "sharding", inst.sharding()->ToString());
  for (const auto& [name, value] : inst.raw_attributes()) AppendAttr(out, name, value);
  if (!inst.frontend_attributes().empty()) {
    std::string s = "{";
    for (size_t i = 0; i < inst.frontend_attributes().size(); ++i) {
      const auto& [k, v] = inst.frontend_attributes()[i];
      s += (i ? "," : "") + k + "=" + Quote(v);
    }
    AppendAttr(out, "frontend_attributes", s + "}");
  }
  if (!inst.metadata().empty()) {
    const OpMetadata& m = inst.metadata();
    std::string s = "{";
    auto add = [&](std::string_view k, const std::string& v) {
      if (s.size() > 1) s += " ";
      s += std::string(k) + "=" + v;
    };
    if (!m.op_type.empty()) add("op_type", Quote(m.op_type));
    if (!m.op_name.empty()) add("op_name", Quote(m.op_name));
    if (!m.source_file.empty()) add("source_file", Quote(m.source_file));
    if (m.source_line != 0) add("source_line", std::to_string(m.source_line));
    for (const auto& [k, v] : m.other) add(k, v);
    AppendAttr(out, "metadata", s + "}");
  }
  if (!inst.backend_config().empty() || inst.backend_config_is_braced()) {
    AppendAttr(
        out, "backend_config",
        inst.backend_config_is_braced() ? inst.backend_config() : Quote(inst.backend_config()));
  }
}

// The attributes of `inst` other than its operands, in the order XLA prints them.
void AppendTypedAttributes(const HloInstruction& inst, std::string& out) {
  AppendIndexingAttributes(inst, out);
  AppendOpAttributes(inst, out);
  AppendCollectiveAttributes(inst, out);
  AppendCalledComputations(inst, out);
  AppendBackendAttributes(inst, out);
}

}  // namespace

std::string PrintLiteral(const LiteralValues& literal, const Shape& shape) {
  if (literal.elided) return "{...}";
  if (shape.IsTuple()) {
    std::string s = "(";
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i) s += ", ";
      if (static_cast<size_t>(i) < literal.tuple_elements.size()) {
        s += PrintLiteral(literal.tuple_elements[static_cast<size_t>(i)], shape.tuple_shapes(i));
      }
    }
    return s + ")";
  }
  return LeafPrinter(literal, shape).Print();
}

std::string PrintInstruction(const HloInstruction& inst) {
  std::string out;
  const HloComputation* parent = inst.parent();
  if (parent != nullptr && parent->root_instruction() == &inst) out += "ROOT ";
  out += "%" + inst.name() + " = " + inst.shape().ToString() + " " +
         std::string(HloOpcodeString(inst.opcode())) + "(";
  if (inst.opcode() == HloOpcode::kParameter) {
    out += std::to_string(inst.parameter_number());
  } else if (inst.opcode() == HloOpcode::kConstant) {
    out += PrintLiteral(inst.literal(), inst.shape());
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (i) out += ", ";
      out += inst.operand(i)->shape().ToString() + " %" + inst.operand(i)->name();
    }
  }
  out += ")";
  AppendTypedAttributes(inst, out);
  return out;
}

std::string PrintComputation(const HloComputation& comp) {
  std::string out;
  if (comp.IsEntry()) out += "ENTRY ";
  out += "%" + comp.name() + " (";
  for (int64_t i = 0; i < comp.num_parameters(); ++i) {
    const HloInstruction* p = comp.parameter_instruction(i);
    if (i) out += ", ";
    if (p != nullptr) out += p->name() + ": " + p->shape().ToString(/*print_layout=*/false);
  }
  out += ") -> ";
  out += comp.root_instruction() ? comp.root_instruction()->shape().ToString(false) : "()";
  out += " {\n";
  for (const auto& inst : comp.instructions())
    out += fmt::format("  {}\n", PrintInstruction(*inst));
  out += "}";
  if (!comp.execution_thread().empty()) {
    out += fmt::format(", execution_thread={}", Quote(comp.execution_thread()));
  }
  return out + "\n";
}

std::string PrintModule(const HloModule& module) {
  std::string out = "HloModule " + module.name();
  if (module.is_scheduled()) out += ", is_scheduled=true";
  if (!module.input_output_alias().empty()) {
    out += ", input_output_alias=" + module.input_output_alias();
  }
  if (!module.entry_computation_layout().empty()) {
    out += ", entry_computation_layout=" + module.entry_computation_layout();
  }
  if (module.replica_count() != 1) out += fmt::format(", replica_count={}", module.replica_count());
  if (module.num_partitions() != 1) {
    out += fmt::format(", num_partitions={}", module.num_partitions());
  }
  for (const auto& [k, v] : module.other_attributes()) out += ", " + k + "=" + v;
  out += "\n";
  for (const auto& comp : module.computations())
    out += fmt::format("\n{}", PrintComputation(*comp));
  return out;
}

}  // namespace tpusim::hlo
