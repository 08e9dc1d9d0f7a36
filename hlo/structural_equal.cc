#include "hlo/structural_equal.h"

#include <fmt/format.h>

namespace tpusim::hlo {
namespace {

std::vector<std::string> Names(const std::vector<HloComputation*>& cs) {
  std::vector<std::string> out;
  for (const HloComputation* c : cs) out.push_back(c ? c->name() : "<null>");
  return out;
}

bool Fail(std::string* diff, std::string message) {
  if (diff != nullptr) *diff = std::move(message);
  return false;
}

}  // namespace

bool InstructionsEqual(const HloInstruction& a, const HloInstruction& b, std::string* diff) {
  const std::string who = fmt::format("instruction '{}'", a.name());
  if (a.name() != b.name()) return Fail(diff, fmt::format("name {} vs {}", a.name(), b.name()));
  if (a.opcode() != b.opcode()) {
    return Fail(diff, fmt::format("{}: opcode {} vs {}", who, HloOpcodeString(a.opcode()),
                                  HloOpcodeString(b.opcode())));
  }
  if (!(a.shape() == b.shape())) {
    return Fail(diff,
                fmt::format("{}: shape {} vs {}", who, a.shape().ToString(), b.shape().ToString()));
  }
  if (a.operand_count() != b.operand_count()) {
    return Fail(diff,
                fmt::format("{}: {} vs {} operands", who, a.operand_count(), b.operand_count()));
  }
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    if (a.operand(i)->name() != b.operand(i)->name()) {
      return Fail(diff, fmt::format("{}: operand {} is '{}' vs '{}'", who, i, a.operand(i)->name(),
                                    b.operand(i)->name()));
    }
  }
  if (Names(a.called_computations()) != Names(b.called_computations()) ||
      Names(a.calls()) != Names(b.calls()) ||
      Names(a.branch_computations()) != Names(b.branch_computations())) {
    return Fail(diff, fmt::format("{}: called computations differ", who));
  }
  struct Check {
    const char* what;
    bool equal;
  };
  const Check checks[] = {
      {"parameter number", a.parameter_number() == b.parameter_number()},
      {"tuple index", a.tuple_index() == b.tuple_index()},
      {"iota dimension", a.iota_dimension() == b.iota_dimension()},
      {"dimensions", a.dimensions() == b.dimensions() && a.has_dimensions() == b.has_dimensions()},
      {"dot dimension numbers", a.dot_dimension_numbers() == b.dot_dimension_numbers()},
      {"precision config", a.precision_config() == b.precision_config()},
      {"window", a.window() == b.window() && a.has_window() == b.has_window()},
      {"dim_labels",
       a.convolution_dimension_numbers() == b.convolution_dimension_numbers() &&
           a.has_convolution_dimension_numbers() == b.has_convolution_dimension_numbers()},
      {"feature_group_count", a.feature_group_count() == b.feature_group_count()},
      {"batch_group_count", a.batch_group_count() == b.batch_group_count()},
      {"slice", a.slice_starts() == b.slice_starts() && a.slice_limits() == b.slice_limits() &&
                    a.slice_strides() == b.slice_strides()},
      {"dynamic_slice_sizes", a.dynamic_slice_sizes() == b.dynamic_slice_sizes()},
      {"padding", a.padding_config() == b.padding_config()},
      {"gather dimension numbers", a.gather_dimension_numbers() == b.gather_dimension_numbers() &&
                                       a.gather_slice_sizes() == b.gather_slice_sizes()},
      {"scatter dimension numbers", a.scatter_dimension_numbers() == b.scatter_dimension_numbers()},
      {"indices_are_sorted", a.indices_are_sorted() == b.indices_are_sorted()},
      {"unique_indices", a.unique_indices() == b.unique_indices()},
      {"comparison", a.comparison_direction() == b.comparison_direction() &&
                         a.comparison_type() == b.comparison_type()},
      {"literal", a.literal() == b.literal()},
      {"custom_call_target", a.custom_call_target() == b.custom_call_target()},
      {"backend_config", a.backend_config() == b.backend_config() &&
                             a.backend_config_is_braced() == b.backend_config_is_braced()},
      {"api_version", a.custom_call_api_version() == b.custom_call_api_version()},
      {"replica_groups", a.replica_groups() == b.replica_groups() &&
                             a.has_replica_groups() == b.has_replica_groups()},
      {"channel_id", a.channel_id() == b.channel_id()},
      {"use_global_device_ids", a.use_global_device_ids() == b.use_global_device_ids()},
      {"constrain_layout", a.constrain_layout() == b.constrain_layout()},
      {"source_target_pairs", a.source_target_pairs() == b.source_target_pairs()},
      {"sharding", a.sharding() == b.sharding()},
      {"metadata", a.metadata() == b.metadata()},
      {"frontend_attributes", a.frontend_attributes() == b.frontend_attributes()},
      {"fusion kind", a.fusion_kind() == b.fusion_kind()},
      {"distribution", a.distribution() == b.distribution()},
      {"rng algorithm", a.rng_algorithm() == b.rng_algorithm()},
      {"epsilon", a.epsilon() == b.epsilon()},
      {"feature_index", a.feature_index() == b.feature_index()},
      {"is_stable", a.is_stable() == b.is_stable()},
      {"exponent/mantissa bits",
       a.exponent_bits() == b.exponent_bits() && a.mantissa_bits() == b.mantissa_bits()},
      {"fft", a.fft_type() == b.fft_type() && a.fft_length() == b.fft_length()},
      {"raw attributes", a.raw_attributes() == b.raw_attributes()},
  };
  for (const Check& c : checks) {
    if (!c.equal) return Fail(diff, fmt::format("{}: {} differs", who, c.what));
  }
  return true;
}

bool ModulesEqual(const HloModule& a, const HloModule& b, std::string* diff) {
  if (a.name() != b.name())
    return Fail(diff, fmt::format("module name {} vs {}", a.name(), b.name()));
  if (a.replica_count() != b.replica_count() || a.num_partitions() != b.num_partitions() ||
      a.is_scheduled() != b.is_scheduled() || a.input_output_alias() != b.input_output_alias() ||
      a.entry_computation_layout() != b.entry_computation_layout() ||
      a.other_attributes() != b.other_attributes()) {
    return Fail(diff, "module header attributes differ");
  }
  if (a.computations().size() != b.computations().size()) {
    return Fail(diff, fmt::format("{} vs {} computations", a.computations().size(),
                                  b.computations().size()));
  }
  if ((a.entry_computation() == nullptr) != (b.entry_computation() == nullptr) ||
      (a.entry_computation() != nullptr &&
       a.entry_computation()->name() != b.entry_computation()->name())) {
    return Fail(diff, "entry computations differ");
  }
  for (size_t c = 0; c < a.computations().size(); ++c) {
    const HloComputation& ca = *a.computations()[c];
    const HloComputation& cb = *b.computations()[c];
    if (ca.name() != cb.name()) {
      return Fail(diff, fmt::format("computation {}: '{}' vs '{}'", c, ca.name(), cb.name()));
    }
    if (ca.instruction_count() != cb.instruction_count() ||
        ca.num_parameters() != cb.num_parameters() ||
        ca.execution_thread() != cb.execution_thread() ||
        ca.root_instruction()->name() != cb.root_instruction()->name()) {
      return Fail(
          diff,
          fmt::format("computation '{}': instruction count, parameters or root differ", ca.name()));
    }
    for (size_t i = 0; i < ca.instructions().size(); ++i) {
      std::string d;
      if (!InstructionsEqual(*ca.instructions()[i], *cb.instructions()[i], &d)) {
        return Fail(diff, fmt::format("computation '{}', {}", ca.name(), d));
      }
    }
  }
  return true;
}

}  // namespace tpusim::hlo
