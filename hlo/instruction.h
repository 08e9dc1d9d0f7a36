// HloInstruction: one HLO operation, in XLA's terms (xla/hlo/ir/hlo_instruction.h), but as one
// class with typed attribute fields instead of XLA's subclass per opcode. An attribute that an
// opcode does not use keeps its default value; `has_*` flags say whether optional attributes were
// written.
//
// Ownership: an HloComputation owns its instructions (std::unique_ptr); operands, users, the parent
// and called computations are non-owning pointers into the same HloModule.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "hlo/attributes.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"
#include "hlo/sharding.h"

namespace tpusim::hlo {

class HloComputation;

class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, Shape shape, std::string name)
      : opcode_(opcode), shape_(std::move(shape)), name_(std::move(name)) {}
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  // ---- Identity ----
  HloOpcode opcode() const { return opcode_; }
  /// Name without the `%` ("add.53").
  const std::string& name() const { return name_; }
  /// Renames the instruction (and keeps its computation's name index, FindInstruction, current).
  void set_name(std::string name);
  /// Result shape (array or tuple), with layout when the text had one.
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* parent) { parent_ = parent; }
  /// Where the instruction's name starts in the text (1-based line:column; 0:0 if built in code).
  SourceLocation location() const { return location_; }
  void set_location(SourceLocation loc) { location_ = loc; }

  // ---- Operands and users ----
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  /// Appends `operand` and records this instruction as one of its users.
  void AppendOperand(HloInstruction* operand);
  /// Distinct users, in the order they were first added.
  const std::vector<HloInstruction*>& users() const { return users_; }
  // Graph edits for passes (added by the lowering helper; additive).
  /// Replaces operand `i` by `new_operand`, keeping both instructions' user lists exact.
  void ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  /// Makes every user of this instruction use `other` instead (and `other` becomes its parent's
  /// root if this instruction was the root). `other` must not be this instruction.
  void ReplaceAllUsesWith(HloInstruction* other);
  /// Drops all operands (removing this instruction from their user lists); used before removal.
  void DetachOperands();

  // ---- Called computations ----
  /// All computations this instruction calls, in role order (to_apply, condition, body, select,
  /// scatter, calls..., branches...). Empty for most opcodes.
  std::vector<HloComputation*> called_computations() const;
  /// reduce, reduce-window, map, sort, scatter, all-reduce, reduce-scatter: the reducer/comparator.
  HloComputation* to_apply() const { return to_apply_; }
  void set_to_apply(HloComputation* c) { to_apply_ = c; }
  /// while.
  HloComputation* while_condition() const { return while_condition_; }
  HloComputation* while_body() const { return while_body_; }
  void set_while_condition(HloComputation* c) { while_condition_ = c; }
  void set_while_body(HloComputation* c) { while_body_ = c; }
  /// select-and-scatter.
  HloComputation* select() const { return select_; }
  HloComputation* scatter() const { return scatter_; }
  void set_select(HloComputation* c) { select_ = c; }
  void set_scatter(HloComputation* c) { scatter_ = c; }
  /// call / fusion / async-start (one), custom-call `called_computations={...}` (any number).
  const std::vector<HloComputation*>& calls() const { return calls_; }
  std::vector<HloComputation*>& mutable_calls() { return calls_; }
  /// The single callee of call / fusion / async-start; nullptr if there is not exactly one.
  HloComputation* called_computation() const { return calls_.size() == 1 ? calls_[0] : nullptr; }
  /// conditional: branch i (a pred conditional has {true_computation, false_computation}).
  const std::vector<HloComputation*>& branch_computations() const { return branches_; }
  std::vector<HloComputation*>& mutable_branch_computations() { return branches_; }

  // ---- Typed attributes (by opcode) ----
  /// parameter(N).
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  /// get-tuple-element index=N.
  int64_t tuple_index() const { return tuple_index_; }
  void set_tuple_index(int64_t i) { tuple_index_ = i; }
  /// iota iota_dimension=N.
  int64_t iota_dimension() const { return iota_dimension_; }
  void set_iota_dimension(int64_t d) { iota_dimension_ = d; }
  /// `dimensions={...}`: broadcast (operand dim i -> output dim dimensions[i]), transpose
  /// (permutation), reduce / reverse / sort / concatenate / all-gather / reduce-scatter /
  /// all-to-all dims.
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[static_cast<size_t>(i)]; }
  std::vector<int64_t>& mutable_dimensions() { return dimensions_; }
  bool has_dimensions() const { return has_dimensions_; }
  void set_has_dimensions(bool v) { has_dimensions_ = v; }

  /// dot.
  const DotDimensionNumbers& dot_dimension_numbers() const { return dot_dims_; }
  DotDimensionNumbers& mutable_dot_dimension_numbers() { return dot_dims_; }
  /// dot / convolution operand_precision and algorithm.
  const PrecisionConfig& precision_config() const { return precision_config_; }
  PrecisionConfig& mutable_precision_config() { return precision_config_; }
  /// Precision of operand i (kDefault when not written).
  Precision operand_precision(int64_t i) const;

  /// convolution, reduce-window, select-and-scatter.
  const Window& window() const { return window_; }
  Window& mutable_window() { return window_; }
  bool has_window() const { return has_window_; }
  void set_has_window(bool v) { has_window_ = v; }
  const ConvolutionDimensionNumbers& convolution_dimension_numbers() const { return conv_dims_; }
  ConvolutionDimensionNumbers& mutable_convolution_dimension_numbers() { return conv_dims_; }
  bool has_convolution_dimension_numbers() const { return has_conv_dims_; }
  void set_has_convolution_dimension_numbers(bool v) { has_conv_dims_ = v; }
  int64_t feature_group_count() const { return feature_group_count_; }
  void set_feature_group_count(int64_t n) { feature_group_count_ = n; }
  int64_t batch_group_count() const { return batch_group_count_; }
  void set_batch_group_count(int64_t n) { batch_group_count_ = n; }

  /// slice={[start:limit:stride], ...}.
  const std::vector<int64_t>& slice_starts() const { return slice_starts_; }
  const std::vector<int64_t>& slice_limits() const { return slice_limits_; }
  const std::vector<int64_t>& slice_strides() const { return slice_strides_; }
  std::vector<int64_t>& mutable_slice_starts() { return slice_starts_; }
  std::vector<int64_t>& mutable_slice_limits() { return slice_limits_; }
  std::vector<int64_t>& mutable_slice_strides() { return slice_strides_; }
  /// dynamic-slice dynamic_slice_sizes={...}.
  const std::vector<int64_t>& dynamic_slice_sizes() const { return dynamic_slice_sizes_; }
  std::vector<int64_t>& mutable_dynamic_slice_sizes() { return dynamic_slice_sizes_; }

  /// pad padding=...
  const PaddingConfig& padding_config() const { return padding_config_; }
  PaddingConfig& mutable_padding_config() { return padding_config_; }

  /// gather (dimension numbers + slice_sizes) and scatter.
  const GatherDimensionNumbers& gather_dimension_numbers() const { return gather_dims_; }
  GatherDimensionNumbers& mutable_gather_dimension_numbers() { return gather_dims_; }
  const std::vector<int64_t>& gather_slice_sizes() const { return gather_slice_sizes_; }
  std::vector<int64_t>& mutable_gather_slice_sizes() { return gather_slice_sizes_; }
  const ScatterDimensionNumbers& scatter_dimension_numbers() const { return scatter_dims_; }
  ScatterDimensionNumbers& mutable_scatter_dimension_numbers() { return scatter_dims_; }
  bool indices_are_sorted() const { return indices_are_sorted_; }
  void set_indices_are_sorted(bool v) { indices_are_sorted_ = v; }
  bool unique_indices() const { return unique_indices_; }
  void set_unique_indices(bool v) { unique_indices_ = v; }

  /// compare.
  ComparisonDirection comparison_direction() const { return comparison_direction_; }
  void set_comparison_direction(ComparisonDirection d) { comparison_direction_ = d; }
  ComparisonType comparison_type() const { return comparison_type_; }
  void set_comparison_type(ComparisonType t) { comparison_type_ = t; }

  /// constant: the values as parsed (see LiteralValues).
  const LiteralValues& literal() const { return literal_; }
  LiteralValues& mutable_literal() { return literal_; }

  /// custom-call.
  const std::string& custom_call_target() const { return custom_call_target_; }
  void set_custom_call_target(std::string t) { custom_call_target_ = std::move(t); }
  /// backend_config: the unescaped string for `backend_config="..."`, the braced text verbatim for
  /// `backend_config={...}` (backend_config_is_braced() true). Any opcode may carry one.
  const std::string& backend_config() const { return backend_config_; }
  bool backend_config_is_braced() const { return backend_config_braced_; }
  void set_backend_config(std::string text, bool braced) {
    backend_config_ = std::move(text);
    backend_config_braced_ = braced;
  }
  /// api_version=API_VERSION_... verbatim ("" if absent).
  const std::string& custom_call_api_version() const { return api_version_; }
  void set_custom_call_api_version(std::string v) { api_version_ = std::move(v); }

  /// Collectives.
  const ReplicaGroups& replica_groups() const { return replica_groups_; }
  ReplicaGroups& mutable_replica_groups() { return replica_groups_; }
  bool has_replica_groups() const { return has_replica_groups_; }
  void set_has_replica_groups(bool v) { has_replica_groups_ = v; }
  std::optional<int64_t> channel_id() const { return channel_id_; }
  void set_channel_id(std::optional<int64_t> id) { channel_id_ = id; }
  bool use_global_device_ids() const { return use_global_device_ids_; }
  void set_use_global_device_ids(bool v) { use_global_device_ids_ = v; }
  bool constrain_layout() const { return constrain_layout_; }
  void set_constrain_layout(bool v) { constrain_layout_ = v; }
  /// collective-permute source_target_pairs={{0,1},{1,0}}.
  const std::vector<std::pair<int64_t, int64_t>>& source_target_pairs() const { return pairs_; }
  std::vector<std::pair<int64_t, int64_t>>& mutable_source_target_pairs() { return pairs_; }

  /// sharding={...}; nullopt if absent.
  const std::optional<HloSharding>& sharding() const { return sharding_; }
  void set_sharding(std::optional<HloSharding> s) { sharding_ = std::move(s); }

  /// metadata={...}.
  const OpMetadata& metadata() const { return metadata_; }
  OpMetadata& mutable_metadata() { return metadata_; }
  /// frontend_attributes={k="v",...} in written order (values unescaped).
  const std::vector<std::pair<std::string, std::string>>& frontend_attributes() const {
    return frontend_attributes_;
  }
  std::vector<std::pair<std::string, std::string>>& mutable_frontend_attributes() {
    return frontend_attributes_;
  }

  /// fusion kind=...
  FusionKind fusion_kind() const { return fusion_kind_; }
  void set_fusion_kind(FusionKind k) { fusion_kind_ = k; }
  /// rng distribution=..., rng-bit-generator algorithm=...
  RandomDistribution distribution() const { return distribution_; }
  void set_distribution(RandomDistribution d) { distribution_ = d; }
  RandomAlgorithm rng_algorithm() const { return rng_algorithm_; }
  void set_rng_algorithm(RandomAlgorithm a) { rng_algorithm_ = a; }
  /// batch-norm-* epsilon / feature_index.
  float epsilon() const { return epsilon_; }
  void set_epsilon(float e) { epsilon_ = e; }
  int64_t feature_index() const { return feature_index_; }
  void set_feature_index(int64_t i) { feature_index_ = i; }
  /// sort is_stable=true.
  bool is_stable() const { return is_stable_; }
  void set_is_stable(bool v) { is_stable_ = v; }
  /// reduce-precision exponent_bits / mantissa_bits.
  int64_t exponent_bits() const { return exponent_bits_; }
  int64_t mantissa_bits() const { return mantissa_bits_; }
  void set_exponent_bits(int64_t b) { exponent_bits_ = b; }
  void set_mantissa_bits(int64_t b) { mantissa_bits_ = b; }

  /// fft fft_type=... fft_length={...}: the transform and the lengths of the 1-3 trailing
  /// dimensions it runs over (outermost first; for IRFFT the last is the real output's length).
  FftType fft_type() const { return fft_type_; }
  void set_fft_type(FftType t) { fft_type_ = t; }
  const std::vector<int64_t>& fft_length() const { return fft_length_; }
  std::vector<int64_t>& mutable_fft_length() { return fft_length_; }

  /// Attributes tpusim does not interpret, in written order, as `name` -> value text verbatim (e.g.
  /// {"operand_layout_constraints", "{f32[2]{0}}"}). Kept so printing is lossless.
  const std::vector<std::pair<std::string, std::string>>& raw_attributes() const {
    return raw_attrs_;
  }
  std::vector<std::pair<std::string, std::string>>& mutable_raw_attributes() { return raw_attrs_; }
  /// The value text of raw attribute `name`, or nullptr.
  const std::string* FindRawAttribute(std::string_view name) const;

  /// One-line HLO text of this instruction (with operand shapes), as the printer writes it.
  std::string ToString() const;

 private:
  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  HloComputation* parent_ = nullptr;
  SourceLocation location_;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;

  HloComputation* to_apply_ = nullptr;
  HloComputation* while_condition_ = nullptr;
  HloComputation* while_body_ = nullptr;
  HloComputation* select_ = nullptr;
  HloComputation* scatter_ = nullptr;
  std::vector<HloComputation*> calls_;
  std::vector<HloComputation*> branches_;

  int64_t parameter_number_ = 0;
  int64_t tuple_index_ = 0;
  int64_t iota_dimension_ = 0;
  std::vector<int64_t> dimensions_;
  bool has_dimensions_ = false;
  DotDimensionNumbers dot_dims_;
  PrecisionConfig precision_config_;
  Window window_;
  bool has_window_ = false;
  ConvolutionDimensionNumbers conv_dims_;
  bool has_conv_dims_ = false;
  int64_t feature_group_count_ = 1;
  int64_t batch_group_count_ = 1;
  std::vector<int64_t> slice_starts_, slice_limits_, slice_strides_;
  std::vector<int64_t> dynamic_slice_sizes_;
  PaddingConfig padding_config_;
  GatherDimensionNumbers gather_dims_;
  std::vector<int64_t> gather_slice_sizes_;
  ScatterDimensionNumbers scatter_dims_;
  bool indices_are_sorted_ = false;
  bool unique_indices_ = false;
  ComparisonDirection comparison_direction_ = ComparisonDirection::kEq;
  ComparisonType comparison_type_ = ComparisonType::kDefault;
  LiteralValues literal_;
  std::string custom_call_target_;
  std::string backend_config_;
  bool backend_config_braced_ = false;
  std::string api_version_;
  ReplicaGroups replica_groups_;
  bool has_replica_groups_ = false;
  std::optional<int64_t> channel_id_;
  bool use_global_device_ids_ = false;
  bool constrain_layout_ = false;
  std::vector<std::pair<int64_t, int64_t>> pairs_;
  std::optional<HloSharding> sharding_;
  OpMetadata metadata_;
  std::vector<std::pair<std::string, std::string>> frontend_attributes_;
  FusionKind fusion_kind_ = FusionKind::kLoop;
  RandomDistribution distribution_ = RandomDistribution::kUniform;
  RandomAlgorithm rng_algorithm_ = RandomAlgorithm::kDefault;
  float epsilon_ = 0.0f;
  int64_t feature_index_ = 0;
  bool is_stable_ = false;
  int64_t exponent_bits_ = 0;
  int64_t mantissa_bits_ = 0;
  FftType fft_type_ = FftType::kFft;
  std::vector<int64_t> fft_length_;
  std::vector<std::pair<std::string, std::string>> raw_attrs_;
};

}  // namespace tpusim::hlo
