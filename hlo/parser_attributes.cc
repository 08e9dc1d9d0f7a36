// Instruction attributes `, name=value` (see parser_impl.h and reference/hlo-text-format.md §6).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

using Role = PendingComputationRef::Role;

bool IsBatchNorm(HloOpcode op) {
  return op == HloOpcode::kBatchNormGrad || op == HloOpcode::kBatchNormInference ||
         op == HloOpcode::kBatchNormTraining;
}

// Splits `s` on `sep`.
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t p = 0;
  while (true) {
    size_t e = s.find(sep, p);
    if (e == std::string_view::npos) {
      out.push_back(s.substr(p));
      return out;
    }
    out.push_back(s.substr(p, e - p));
    p = e + 1;
  }
}

bool ToInt(std::string_view s, int64_t* v) {
  bool neg = false;
  if (!s.empty() && s[0] == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > 18) return false;
  int64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + (c - '0');
  }
  *v = neg ? -x : x;
  return true;
}

// Attributes that must be present, per opcode (XLA's parser requires the same ones).
std::vector<std::string_view> RequiredAttributes(HloOpcode op) {
  switch (op) {
    case HloOpcode::kGetTupleElement:
      return {"index"};
    case HloOpcode::kCompare:
      return {"direction"};
    case HloOpcode::kFusion:
      return {"kind", "calls"};
    case HloOpcode::kWhile:
      return {"condition", "body"};
    case HloOpcode::kReduce:
      return {"dimensions", "to_apply"};
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
      return {"dimensions"};
    case HloOpcode::kSlice:
      return {"slice"};
    case HloOpcode::kPad:
      return {"padding"};
    case HloOpcode::kCustomCall:
      return {"custom_call_target"};
    case HloOpcode::kIota:
      return {"iota_dimension"};
    case HloOpcode::kReduceWindow:
      return {"window", "to_apply"};
    case HloOpcode::kSelectAndScatter:
      return {"window", "select", "scatter"};
    case HloOpcode::kGather:
      return {"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
              "slice_sizes"};
    case HloOpcode::kScatter:
      return {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
              "index_vector_dim", "to_apply"};
    case HloOpcode::kCall:
    case HloOpcode::kMap:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
      return {"to_apply"};
    case HloOpcode::kSort:
      return {"dimensions", "to_apply"};
    case HloOpcode::kDynamicSlice:
      return {"dynamic_slice_sizes"};
    case HloOpcode::kRng:
      return {"distribution"};
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
      return {"epsilon", "feature_index"};
    case HloOpcode::kReducePrecision:
      return {"exponent_bits", "mantissa_bits"};
    case HloOpcode::kConvolution:
      return {"dim_labels"};
    case HloOpcode::kFft:
      return {"fft_type", "fft_length"};
    default:
      return {};
  }
}

}  // namespace

StatusOr<int64_t> HloParserImpl::ParseInt() {
  const Token& tok = lex_.Peek();
  if (tok.kind != TokKind::kInt || tok.int_overflow) {
    return ErrorAtToken(tok, fmt::format("expected an integer, got {}", Describe(tok)));
  }
  return lex_.Next().int_value;
}

StatusOr<bool> HloParserImpl::ParseBool() {
  const Token& tok = lex_.Peek();
  if (tok.kind == TokKind::kIdent && (tok.text == "true" || tok.text == "false")) {
    return lex_.Next().text == "true";
  }
  return ErrorAtToken(tok, fmt::format("expected true or false, got {}", Describe(tok)));
}

StatusOr<double> HloParserImpl::ParseNumber() {
  const Token& tok = lex_.Peek();
  if (tok.kind != TokKind::kInt && tok.kind != TokKind::kFloat) {
    return ErrorAtToken(tok, fmt::format("expected a number, got {}", Describe(tok)));
  }
  return lex_.Next().float_value;
}

Status HloParserImpl::ParseIntList(std::vector<int64_t>* out) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{'"));
  out->clear();
  if (ConsumeIf(TokKind::kRbrace)) return OkStatus();
  while (true) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
    out->push_back(v);
    if (ConsumeIf(TokKind::kRbrace)) return OkStatus();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}' in the list"));
  }
}

namespace {

// Every instruction attribute XLA's HLO parser defines (xla/hlo/parser/hlo_parser.cc: the common
// attributes of ParseInstruction and the per-opcode ones of ParseInstructionRhs), including those
// tpusim keeps verbatim without modelling them.
bool IsXlaAttributeName(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      // common to every instruction
      "sharding", "frontend_attributes", "statistics_viz", "parameter_replication",
      "control-predecessors", "metadata", "backend_config", "result_accuracy", "original_value",
      // per opcode
      "algorithm", "api_version", "async_execution_thread", "batch_group_count", "body",
      "branch_computations", "called_computations", "calls", "channel_id", "collapsed_slice_dims",
      "composite.attributes", "composite.name", "composite.version", "condition",
      "constrain_layout", "cross_program_prefetch_index", "custom_call_has_side_effect",
      "custom_call_schedule", "custom_call_target", "delta", "dim_labels", "dimensions",
      "direction", "distribution", "domain", "dynamic_slice_sizes", "epsilon", "exponent_bits",
      "feature_group_count", "feature_index", "fft_length", "fft_type", "false_computation",
      "has_dynamic_root", "index", "index_vector_dim", "indices_are_sorted", "inferred_dimension", "infeed_config",
      "input_batching_dims", "inserted_window_dims", "iota_dimension", "is_associative",
      "is_composite", "is_cross_program_prefetch", "is_host_transfer", "is_reverse", "is_stable", "k", "kind", "largest",
      "left_side", "lhs_batch_dims", "lhs_contracting_dims", "lhs_ragged_dims", "literal", "lower",
      "mantissa_bits", "num_carries", "offset_dims", "operand_batching_dims", "operand_layout_constraints",
      "operand_precision", "outfeed_config", "outfeed_shape", "output_to_operand_aliasing",
      "padding", "replica_groups", "rhs_batch_dims", "rhs_contracting_dims", "rhs_group_dims",
      "schedule", "scatter", "scatter_dims_to_operand_dims", "scatter_indices_batching_dims",
      "select", "slice", "slice_sizes", "source_target_pairs", "sparsity", "split_dimension",
      "start_index_map", "start_indices_batching_dims", "to_apply", "transpose_a",
      "true_computation", "type", "unique_indices", "unit_diagonal", "update_window_dims",
      "use_global_device_ids", "window"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace

Status HloParserImpl::ParseAttributes(HloInstruction& inst) {
  std::vector<std::string> seen;
  while (lex_.Peek().kind == TokKind::kComma) {
    lex_.Next();
    const Token name_tok = lex_.Peek();
    if (name_tok.kind != TokKind::kIdent || lex_.PeekNext().kind != TokKind::kEqual) {
      return ErrorAtToken(
          name_tok, fmt::format("expected an attribute `name=value`, got {}", Describe(name_tok)));
    }
    const std::string name(name_tok.text);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return ErrorAt(name_tok.offset, fmt::format("duplicate attribute '{}'", name));
    }
    seen.push_back(name);
    lex_.Next();  // name
    lex_.Next();  // '='
    TPUSIM_RETURN_IF_ERROR(ParseAttribute(inst, name_tok));
  }
  return CheckRequiredAttributes(inst, seen);
}

Status HloParserImpl::CheckRequiredAttributes(const HloInstruction& inst,
                                              const std::vector<std::string>& seen) const {
  for (std::string_view req : RequiredAttributes(inst.opcode())) {
    bool found = std::find(seen.begin(), seen.end(), req) != seen.end();
    // A pred conditional names true/false computations; a while/call may spell its callee
    // differently.
    if (!found) {
      return LocatedError(filename_, text_, inst.location(),
                          fmt::format("'%{}' ({}) is missing attribute '{}'", inst.name(),
                                      HloOpcodeString(inst.opcode()), req));
    }
  }
  if (inst.opcode() == HloOpcode::kConditional) {
    const bool has = std::find(seen.begin(), seen.end(), "branch_computations") != seen.end() ||
                     (std::find(seen.begin(), seen.end(), "true_computation") != seen.end() &&
                      std::find(seen.begin(), seen.end(), "false_computation") != seen.end());
    if (!has) {
      return LocatedError(filename_, text_, inst.location(),
                          fmt::format("'%{}' (conditional) needs branch_computations= or "
                                      "true_computation= and false_computation=",
                                      inst.name()));
    }
  }
  return OkStatus();
}

Status HloParserImpl::ParseIntAttribute(const std::function<void(int64_t)>& set) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
  set(v);
  return OkStatus();
}

Status HloParserImpl::ParseBoolAttribute(const std::function<void(bool)>& set) {
  TPUSIM_ASSIGN_OR_RETURN(bool v, ParseBool());
  set(v);
  return OkStatus();
}

Status HloParserImpl::ParseEnumAttribute(const Token& vtok, std::string_view name,
                                         const std::function<bool(std::string_view)>& parse) {
  if (vtok.kind != TokKind::kIdent || !parse(vtok.text)) {
    return ErrorAtToken(vtok,
                        fmt::format("unknown value {} for attribute '{}'", Describe(vtok), name));
  }
  lex_.Next();
  return OkStatus();
}

// Dimensions, windows, dimension numbers, slices, padding and precision.
std::optional<Status> HloParserImpl::ParseIndexingAttribute(
    HloInstruction& inst, std::string_view name, const Token& vtok) {
  const HloOpcode op = inst.opcode();
  if (name == "dimensions") {
    inst.set_has_dimensions(true);
    return ParseIntList(&inst.mutable_dimensions());
  }
  if (name == "window") {
    inst.set_has_window(true);
    return ParseWindow(&inst.mutable_window());
  }
  if (name == "dim_labels") {
    inst.set_has_convolution_dimension_numbers(true);
    return ParseDimLabels(&inst.mutable_convolution_dimension_numbers());
  }
  if (name == "feature_group_count" || name == "batch_group_count") {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
    if (v < 1) return ErrorAt(vtok.offset, fmt::format("{} must be positive, got {}", name, v));
    if (name == "feature_group_count") {
      inst.set_feature_group_count(v);
    } else {
      inst.set_batch_group_count(v);
    }
    return OkStatus();
  }
  if (op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kScaledDot) {
    DotDimensionNumbers& d = inst.mutable_dot_dimension_numbers();
    if (name == "lhs_batch_dims") return ParseIntList(&d.lhs_batch_dimensions);
    if (name == "lhs_contracting_dims") return ParseIntList(&d.lhs_contracting_dimensions);
    if (name == "rhs_batch_dims") return ParseIntList(&d.rhs_batch_dimensions);
    if (name == "rhs_contracting_dims") return ParseIntList(&d.rhs_contracting_dimensions);
  }
  if (name == "operand_precision") {
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{'"));
    auto& prec = inst.mutable_precision_config().operand_precision;
    while (!ConsumeIf(TokKind::kRbrace)) {
      const Token& t = lex_.Peek();
      std::string v(t.text);
      std::transform(v.begin(), v.end(), v.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (t.kind != TokKind::kIdent || (v != "default" && v != "high" && v != "highest")) {
        return ErrorAtToken(t,
                            fmt::format("expected default, high or highest, got {}", Describe(t)));
      }
      prec.push_back(v == "default" ? Precision::kDefault
                     : v == "high"  ? Precision::kHigh
                                    : Precision::kHighest);
      lex_.Next();
      if (lex_.Peek().kind != TokKind::kRbrace) {
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}'"));
      }
    }
    return OkStatus();
  }
  if (name == "algorithm" && op == HloOpcode::kRngBitGenerator) {
    return ParseEnumAttribute(vtok, name, [&](std::string_view v) {
      if (v == "rng_default")
        inst.set_rng_algorithm(RandomAlgorithm::kDefault);
      else if (v == "rng_three_fry")
        inst.set_rng_algorithm(RandomAlgorithm::kThreeFry);
      else if (v == "rng_philox")
        inst.set_rng_algorithm(RandomAlgorithm::kPhilox);
      else
        return false;
      return true;
    });
  }
  if (name == "algorithm" && (op == HloOpcode::kDot || op == HloOpcode::kConvolution) &&
      vtok.kind == TokKind::kIdent) {
    inst.mutable_precision_config().algorithm = std::string(lex_.Next().text);
    return OkStatus();
  }
  if (name == "slice" && op == HloOpcode::kSlice) return ParseSlice(inst);
  if (name == "dynamic_slice_sizes" && op == HloOpcode::kDynamicSlice) {
    return ParseIntList(&inst.mutable_dynamic_slice_sizes());
  }
  if (name == "padding" && op == HloOpcode::kPad)
    return ParsePadding(&inst.mutable_padding_config());
  if (op == HloOpcode::kGather) {
    GatherDimensionNumbers& g = inst.mutable_gather_dimension_numbers();
    if (name == "offset_dims") return ParseIntList(&g.offset_dims);
    if (name == "collapsed_slice_dims") return ParseIntList(&g.collapsed_slice_dims);
    if (name == "start_index_map") return ParseIntList(&g.start_index_map);
    if (name == "operand_batching_dims") return ParseIntList(&g.operand_batching_dims);
    if (name == "start_indices_batching_dims") return ParseIntList(&g.start_indices_batching_dims);
    if (name == "index_vector_dim") {
      return ParseIntAttribute([&](int64_t v) { g.index_vector_dim = v; });
    }
    if (name == "slice_sizes") return ParseIntList(&inst.mutable_gather_slice_sizes());
  }
  if (op == HloOpcode::kScatter) {
    ScatterDimensionNumbers& s = inst.mutable_scatter_dimension_numbers();
    if (name == "update_window_dims") return ParseIntList(&s.update_window_dims);
    if (name == "inserted_window_dims") return ParseIntList(&s.inserted_window_dims);
    if (name == "scatter_dims_to_operand_dims")
      return ParseIntList(&s.scatter_dims_to_operand_dims);
    if (name == "input_batching_dims") return ParseIntList(&s.input_batching_dims);
    if (name == "scatter_indices_batching_dims") {
      return ParseIntList(&s.scatter_indices_batching_dims);
    }
    if (name == "index_vector_dim") {
      return ParseIntAttribute([&](int64_t v) { s.index_vector_dim = v; });
    }
  }
  if (name == "indices_are_sorted")
    return ParseBoolAttribute([&](bool v) { inst.set_indices_are_sorted(v); });
  if (name == "unique_indices") {
    return ParseBoolAttribute([&](bool v) { inst.set_unique_indices(v); });
  }
  return std::nullopt;
}

// The attributes of one opcode (comparison, tuple index, iota, fusion kind, rng, batch-norm,
// sort, reduce-precision).
std::optional<Status> HloParserImpl::ParseOpAttribute(HloInstruction& inst, std::string_view name,
                                                      const Token& vtok) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kCompare && name == "direction") {
    return ParseEnumAttribute(vtok, name, [&](std::string_view v) {
      static constexpr std::pair<std::string_view, ComparisonDirection> kDirs[] = {
          {"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe},
          {"GE", ComparisonDirection::kGe}, {"GT", ComparisonDirection::kGt},
          {"LE", ComparisonDirection::kLe}, {"LT", ComparisonDirection::kLt}};
      for (const auto& [s, d] : kDirs) {
        if (v == s) {
          inst.set_comparison_direction(d);
          return true;
        }
      }
      return false;
    });
  }
  if (op == HloOpcode::kCompare && name == "type") {
    return ParseEnumAttribute(vtok, name, [&](std::string_view v) {
      static constexpr std::pair<std::string_view, ComparisonType> kTypes[] = {
          {"FLOAT", ComparisonType::kFloat},
          {"TOTALORDER", ComparisonType::kTotalOrder},
          {"SIGNED", ComparisonType::kSigned},
          {"UNSIGNED", ComparisonType::kUnsigned}};
      for (const auto& [s, t] : kTypes) {
        if (v == s) {
          inst.set_comparison_type(t);
          return true;
        }
      }
      return false;
    });
  }
  if (op == HloOpcode::kGetTupleElement && name == "index") {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
    if (v < 0) return ErrorAt(vtok.offset, fmt::format("tuple index {} is negative", v));
    inst.set_tuple_index(v);
    return OkStatus();
  }
  if (op == HloOpcode::kIota && name == "iota_dimension") {
    return ParseIntAttribute([&](int64_t v) { inst.set_iota_dimension(v); });
  }
  if (op == HloOpcode::kFusion && name == "kind") {
    return ParseEnumAttribute(vtok, name, [&](std::string_view v) {
      if (v == "kLoop")
        inst.set_fusion_kind(FusionKind::kLoop);
      else if (v == "kInput")
        inst.set_fusion_kind(FusionKind::kInput);
      else if (v == "kOutput")
        inst.set_fusion_kind(FusionKind::kOutput);
      else if (v == "kCustom")
        inst.set_fusion_kind(FusionKind::kCustom);
      else
        return false;
      return true;
    });
  }
  if (op == HloOpcode::kRng && name == "distribution") {
    return ParseEnumAttribute(vtok, name, [&](std::string_view v) {
      if (v == "rng_uniform")
        inst.set_distribution(RandomDistribution::kUniform);
      else if (v == "rng_normal")
        inst.set_distribution(RandomDistribution::kNormal);
      else
        return false;
      return true;
    });
  }
  if (IsBatchNorm(op) && name == "epsilon") {
    TPUSIM_ASSIGN_OR_RETURN(double v, ParseNumber());
    inst.set_epsilon(static_cast<float>(v));
    return OkStatus();
  }
  if (IsBatchNorm(op) && name == "feature_index") {
    return ParseIntAttribute([&](int64_t v) { inst.set_feature_index(v); });
  }
  if (name == "is_stable") return ParseBoolAttribute([&](bool v) { inst.set_is_stable(v); });
  if (op == HloOpcode::kReducePrecision && name == "exponent_bits") {
    return ParseIntAttribute([&](int64_t v) { inst.set_exponent_bits(v); });
  }
  if (op == HloOpcode::kReducePrecision && name == "mantissa_bits") {
    return ParseIntAttribute([&](int64_t v) { inst.set_mantissa_bits(v); });
  }
  if (op == HloOpcode::kFft && name == "fft_type") {
    return ParseEnumAttribute(vtok, name, [&](std::string_view v) {
      for (FftType t : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
        if (v == FftTypeName(t)) {
          inst.set_fft_type(t);
          return true;
        }
      }
      return false;
    });
  }
  if (op == HloOpcode::kFft && name == "fft_length") {
    return ParseIntList(&inst.mutable_fft_length());
  }
  return std::nullopt;
}

// Replica groups, channels and source-target pairs.
std::optional<Status> HloParserImpl::ParseCollectiveAttribute(
    HloInstruction& inst, std::string_view name, const Token& /*vtok*/) {
  const HloOpcode op = inst.opcode();
  if (name == "replica_groups") {
    inst.set_has_replica_groups(true);
    return ParseReplicaGroups(&inst.mutable_replica_groups());
  }
  if (name == "channel_id") return ParseIntAttribute([&](int64_t v) { inst.set_channel_id(v); });
  if (name == "use_global_device_ids") {
    return ParseBoolAttribute([&](bool v) { inst.set_use_global_device_ids(v); });
  }
  if (name == "constrain_layout") {
    return ParseBoolAttribute([&](bool v) { inst.set_constrain_layout(v); });
  }
  if (name == "source_target_pairs" &&
      (op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart)) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{'"));
    auto& pairs = inst.mutable_source_target_pairs();
    while (!ConsumeIf(TokKind::kRbrace)) {
      std::vector<int64_t> pair;
      const Token at = lex_.Peek();
      TPUSIM_RETURN_IF_ERROR(ParseIntList(&pair));
      if (pair.size() != 2) return ErrorAt(at.offset, "a source-target pair needs two device ids");
      pairs.emplace_back(pair[0], pair[1]);
      if (lex_.Peek().kind != TokKind::kRbrace) {
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}'"));
      }
    }
    return OkStatus();
  }
  return std::nullopt;
}

// References to called computations (to_apply, condition, body, calls, branches...).
std::optional<Status> HloParserImpl::ParseCalledComputationAttribute(
    HloInstruction& inst, std::string_view name, const Token& vtok) {
  const HloOpcode op = inst.opcode();
  if (name == "to_apply") return ParseComputationRef(inst, Role::kToApply);
  if (name == "condition" && op == HloOpcode::kWhile)
    return ParseComputationRef(inst, Role::kCondition);
  if (name == "body" && op == HloOpcode::kWhile) return ParseComputationRef(inst, Role::kBody);
  if (name == "select" && op == HloOpcode::kSelectAndScatter) {
    return ParseComputationRef(inst, Role::kSelect);
  }
  if (name == "scatter" && op == HloOpcode::kSelectAndScatter) {
    return ParseComputationRef(inst, Role::kScatter);
  }
  if (name == "calls" && op != HloOpcode::kCustomCall) {
    if (vtok.kind == TokKind::kLbrace) return ParseComputationRefList(inst, Role::kCalls);
    return ParseComputationRef(inst, Role::kCalls);
  }
  if (name == "called_computations" && op == HloOpcode::kCustomCall) {
    return ParseComputationRefList(inst, Role::kCalls);
  }
  if (op == HloOpcode::kConditional) {
    if (name == "true_computation") return ParseComputationRef(inst, Role::kTrue);
    if (name == "false_computation") return ParseComputationRef(inst, Role::kFalse);
    if (name == "branch_computations") return ParseComputationRefList(inst, Role::kBranch);
  }
  return std::nullopt;
}

// Custom-call target and API version, backend config, sharding, metadata, frontend attributes.
std::optional<Status> HloParserImpl::ParseBackendAttribute(
    HloInstruction& inst, std::string_view name, const Token& vtok) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kCustomCall && name == "custom_call_target") {
    if (vtok.kind != TokKind::kString) {
      return ErrorAtToken(vtok, "expected a string for custom_call_target");
    }
    inst.set_custom_call_target(lex_.Next().string_value);
    return OkStatus();
  }
  if (name == "api_version" && vtok.kind == TokKind::kIdent) {
    inst.set_custom_call_api_version(std::string(lex_.Next().text));
    return OkStatus();
  }
  if (name == "backend_config") {
    if (vtok.kind == TokKind::kString) {
      inst.set_backend_config(lex_.Next().string_value, /*braced=*/false);
      return OkStatus();
    }
    if (vtok.kind == TokKind::kLbrace) {
      TPUSIM_ASSIGN_OR_RETURN(std::string raw, ScanBalancedGroup());
      inst.set_backend_config(std::move(raw), /*braced=*/true);
      return OkStatus();
    }
  }
  if (name == "sharding") {
    HloSharding s;
    TPUSIM_RETURN_IF_ERROR(ParseSharding(&s));
    inst.set_sharding(std::move(s));
    return OkStatus();
  }
  if (name == "metadata") return ParseMetadata(&inst.mutable_metadata());
  if (name == "frontend_attributes") {
    return ParseFrontendAttributes(&inst.mutable_frontend_attributes());
  }
  return std::nullopt;
}

Status HloParserImpl::ParseAttribute(HloInstruction& inst, const Token& name_tok) {
  const std::string_view name = name_tok.text;
  const HloOpcode op = inst.opcode();
  const Token vtok = lex_.Peek();
  // The families in order; the first that knows the name parses its value.
  for (auto family : {&HloParserImpl::ParseIndexingAttribute, &HloParserImpl::ParseOpAttribute,
                      &HloParserImpl::ParseCollectiveAttribute,
                      &HloParserImpl::ParseCalledComputationAttribute,
                      &HloParserImpl::ParseBackendAttribute}) {
    if (std::optional<Status> parsed = (this->*family)(inst, name, vtok)) return *std::move(parsed);
  }
  // Another attribute XLA's parser knows: kept verbatim (printed back as it was). A name XLA's
  // parser does not know is an error there ("unexpected attribute"), and so here. shuffle's mode
  // attributes are not in the XLA sources tpusim was written against (xla/shuffle.h), so a shuffle
  // keeps every attribute verbatim.
  if (!IsXlaAttributeName(name) && op != HloOpcode::kShuffle) {
    return ErrorAtToken(name_tok, fmt::format("unknown attribute '{}' for {} (XLA's HLO parser "
                                              "refuses attributes it does not define)",
                                              name, HloOpcodeString(op)));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string raw, ScanRawValue());
  inst.mutable_raw_attributes().emplace_back(std::string(name), std::move(raw));
  return OkStatus();
}

Status HloParserImpl::ParseComputationRef(HloInstruction& inst, PendingComputationRef::Role role) {
  const size_t offset = lex_.Peek().offset;
  if (lex_.Peek().kind == TokKind::kLbrace) {
    TPUSIM_ASSIGN_OR_RETURN(std::string inline_name, ParseInlineComputation(inst));
    pending_refs_.push_back({&inst, role, std::move(inline_name), offset});
    return OkStatus();
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string name, ExpectName("computation name"));
  pending_refs_.push_back({&inst, role, std::move(name), offset});
  return OkStatus();
}

Status HloParserImpl::ParseComputationRefList(HloInstruction& inst,
                                              PendingComputationRef::Role role) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{'"));
  if (ConsumeIf(TokKind::kRbrace)) return OkStatus();
  while (true) {
    TPUSIM_RETURN_IF_ERROR(ParseComputationRef(inst, role));
    if (ConsumeIf(TokKind::kRbrace)) return OkStatus();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}' in the computation list"));
  }
}

Status HloParserImpl::ParseWindow(Window* out) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open the window"));
  std::vector<std::pair<Token, Token>> fields;  // key, value
  while (!ConsumeIf(TokKind::kRbrace)) {
    const Token key = lex_.Peek();
    if (key.kind != TokKind::kIdent) {
      return ErrorAtToken(key, fmt::format("expected a window field (size=, stride=, pad=, ...), "
                                           "got {}",
                                           Describe(key)));
    }
    lex_.Next();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kEqual, "'=' after the window field"));
    const Token value = lex_.Next();
    if (value.kind != TokKind::kInt && value.kind != TokKind::kDxD && value.kind != TokKind::kPad) {
      return ErrorAtToken(
          value, fmt::format("bad value {} for window field '{}'", Describe(value), key.text));
    }
    fields.emplace_back(key, value);
  }
  // `size` fixes the rank; every other field must have as many entries.
  size_t rank = 0;
  bool have_size = false;
  for (const auto& [key, value] : fields) {
    if (key.text == "size") {
      rank = Split(value.text, 'x').size();
      have_size = true;
    }
  }
  if (!have_size && !fields.empty()) {
    return ErrorAt(fields[0].first.offset, "window has no size=");
  }
  out->dimensions.assign(rank, WindowDimension{});
  for (const auto& [key, value] : fields) {
    const std::vector<std::string_view> parts = Split(value.text, 'x');
    if (parts.size() != rank) {
      return ErrorAt(value.offset, fmt::format("window field '{}' has {} dimensions, size= has {}",
                                               key.text, parts.size(), rank));
    }
    for (size_t i = 0; i < rank; ++i) {
      WindowDimension& d = out->dimensions[i];
      if (key.text == "pad") {
        const std::vector<std::string_view> lh = Split(parts[i], '_');
        if (lh.size() != 2 || !ToInt(lh[0], &d.padding_low) || !ToInt(lh[1], &d.padding_high)) {
          return ErrorAt(value.offset, fmt::format("bad window pad '{}'", value.text));
        }
        continue;
      }
      int64_t v = 0;
      if (!ToInt(parts[i], &v)) {
        return ErrorAt(value.offset,
                       fmt::format("bad value '{}' for window field '{}'", value.text, key.text));
      }
      if (key.text == "size") {
        d.size = v;
      } else if (key.text == "stride") {
        d.stride = v;
      } else if (key.text == "lhs_dilate") {
        d.base_dilation = v;
      } else if (key.text == "rhs_dilate") {
        d.window_dilation = v;
      } else if (key.text == "rhs_reversal") {
        d.window_reversal = v != 0;
      } else {
        return ErrorAt(key.offset, fmt::format("unknown window field '{}'", key.text));
      }
      if (key.text != "rhs_reversal" && v < 1) {
        return ErrorAt(value.offset,
                       fmt::format("window {} must be positive, got {}", key.text, v));
      }
    }
  }
  return OkStatus();
}

Status HloParserImpl::ParseDimLabels(ConvolutionDimensionNumbers* out) {
  const Token tok = lex_.Peek();
  if (tok.kind != TokKind::kDimLabels) {
    return ErrorAtToken(
        tok, fmt::format("expected dim labels such as b01f_01io->b01f, got {}", Describe(tok)));
  }
  lex_.Next();
  const std::string_view text = tok.text;
  const size_t us = text.find('_');
  const size_t arrow = text.find("->");
  const std::string_view in = text.substr(0, us);
  const std::string_view kernel = text.substr(us + 1, arrow - us - 1);
  const std::string_view outl = text.substr(arrow + 2);
  const size_t rank = in.size();
  if (kernel.size() != rank || outl.size() != rank) {
    return ErrorAt(tok.offset,
                   fmt::format("dim labels '{}': input, kernel and output must have the "
                               "same rank",
                               text));
  }
  const size_t spatial = rank - 2;
  // Decodes one side: positions of the two letters and of spatial dims 0..spatial-1.
  auto decode = [&](std::string_view s, char a, char b, int64_t* pa, int64_t* pb,
                    std::vector<int64_t>* sp) -> bool {
    *pa = -1;
    *pb = -1;
    sp->assign(spatial, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      int64_t* slot = nullptr;
      if (c == a)
        slot = pa;
      else if (c == b)
        slot = pb;
      else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial) {
        slot = &(*sp)[static_cast<size_t>(c - '0')];
      }
      if (slot == nullptr || *slot != -1) return false;
      *slot = static_cast<int64_t>(i);
    }
    return true;
  };
  if (!decode(in, 'b', 'f', &out->input_batch_dimension, &out->input_feature_dimension,
              &out->input_spatial_dimensions) ||
      !decode(kernel, 'i', 'o', &out->kernel_input_feature_dimension,
              &out->kernel_output_feature_dimension, &out->kernel_spatial_dimensions) ||
      !decode(outl, 'b', 'f', &out->output_batch_dimension, &out->output_feature_dimension,
              &out->output_spatial_dimensions)) {
    return ErrorAt(tok.offset, fmt::format("dim labels '{}': each side needs each of its letters "
                                           "(b,f / i,o) and spatial digits 0..{} exactly once",
                                           text, spatial == 0 ? 0 : spatial - 1));
  }
  return OkStatus();
}

Status HloParserImpl::ParseSlice(HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open the slice"));
  while (!ConsumeIf(TokKind::kRbrace)) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLsquare, "'[' in slice={[start:limit:stride], ...}"));
    TPUSIM_ASSIGN_OR_RETURN(int64_t start, ParseInt());
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kColon, "':' in the slice"));
    TPUSIM_ASSIGN_OR_RETURN(int64_t limit, ParseInt());
    int64_t stride = 1;
    if (ConsumeIf(TokKind::kColon)) {
      TPUSIM_ASSIGN_OR_RETURN(stride, ParseInt());
    }
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kRsquare, "']' in the slice"));
    inst.mutable_slice_starts().push_back(start);
    inst.mutable_slice_limits().push_back(limit);
    inst.mutable_slice_strides().push_back(stride);
    if (lex_.Peek().kind != TokKind::kRbrace) {
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}' in the slice"));
    }
  }
  return OkStatus();
}

Status HloParserImpl::ParsePadding(PaddingConfig* out) {
  const Token tok = lex_.Peek();
  if (tok.kind != TokKind::kPad) {
    return ErrorAtToken(tok,
                        fmt::format("expected padding such as 0_0x1_1, got {}", Describe(tok)));
  }
  lex_.Next();
  for (std::string_view dim : Split(tok.text, 'x')) {
    const std::vector<std::string_view> parts = Split(dim, '_');
    PaddingDimension d;
    if ((parts.size() != 2 && parts.size() != 3) || !ToInt(parts[0], &d.edge_padding_low) ||
        !ToInt(parts[1], &d.edge_padding_high) ||
        (parts.size() == 3 && (!ToInt(parts[2], &d.interior_padding) || d.interior_padding < 0))) {
      return ErrorAt(tok.offset, fmt::format("bad padding '{}'", tok.text));
    }
    out->dimensions.push_back(d);
  }
  return OkStatus();
}

Status HloParserImpl::ParseIotaTail(IotaTileAssignment* out) {
  const size_t at = lex_.Peek().offset;
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLeq, "'<=' in the iota form"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLsquare, "'['"));
  while (!ConsumeIf(TokKind::kRsquare)) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
    out->reshape_dims.push_back(v);
    if (lex_.Peek().kind != TokKind::kRsquare) {
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ']'"));
    }
  }
  const Token& t = lex_.Peek();
  if (t.kind == TokKind::kIdent && t.text == "T" && t.offset == lex_.last_end()) {
    lex_.Next();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLparen, "'(' after T"));
    while (!ConsumeIf(TokKind::kRparen)) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
      out->transpose_perm.push_back(v);
      if (lex_.Peek().kind != TokKind::kRparen) {
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ')'"));
      }
    }
  }
  StatusOr<std::vector<int64_t>> expanded = out->Expand();
  if (!expanded.ok()) return ErrorAt(at, expanded.status().message());
  return OkStatus();
}

Status HloParserImpl::ParseReplicaGroups(ReplicaGroups* out) {
  const Token& tok = lex_.Peek();
  if (tok.kind == TokKind::kLsquare) {
    out->iota_form = true;
    lex_.Next();
    while (!ConsumeIf(TokKind::kRsquare)) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
      out->iota.dims.push_back(v);
      if (lex_.Peek().kind != TokKind::kRsquare) {
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ']'"));
      }
    }
    if (out->iota.dims.size() != 2) {
      return ErrorAt(tok.offset, "iota replica groups need [num_groups,group_size]");
    }
    return ParseIotaTail(&out->iota);
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' or '[' for replica_groups"));
  while (!ConsumeIf(TokKind::kRbrace)) {
    std::vector<int64_t> group;
    TPUSIM_RETURN_IF_ERROR(ParseIntList(&group));
    out->groups.push_back(std::move(group));
    if (lex_.Peek().kind != TokKind::kRbrace) {
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}' in replica_groups"));
    }
  }
  return OkStatus();
}

}  // namespace tpusim::hlo::internal
