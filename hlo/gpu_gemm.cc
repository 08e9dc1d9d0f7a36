#include "hlo/gpu_gemm.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tpusim::hlo {

namespace {

using Json = nlohmann::json;

// A proto-JSON int64: a number or a decimal string ("1").
std::optional<int64_t> AsInt(const Json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(s);
}

// config[key] as a list of int64 ([] if absent); nullopt if malformed.
std::optional<std::vector<int64_t>> IntList(const Json& config, const char* key) {
  std::vector<int64_t> out;
  if (!config.contains(key)) return out;
  const Json& list = config.at(key);
  if (!list.is_array()) return std::nullopt;
  for (const Json& v : list) {
    const std::optional<int64_t> i = AsInt(v);
    if (!i) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

// config[key] as a number, `absent` if missing; nullopt if not a number.
std::optional<double> Number(const Json& config, const char* key, double absent) {
  if (!config.contains(key)) return absent;
  const Json& v = config.at(key);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::optional<Precision> PrecisionOf(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "DEFAULT") return Precision::kDefault;
  if (s == "HIGH") return Precision::kHigh;
  if (s == "HIGHEST") return Precision::kHighest;
  return std::nullopt;
}

}  // namespace

bool IsGpuGemmTarget(std::string_view target) {
  return target == "__cublas$gemm" || target == "__cublas$lt$matmul" ||
         target == "__hipblas$gemm" || target == "__hipblaslt$matmul";
}

std::unique_ptr<HloInstruction> GpuGemmAsDot(const HloInstruction& call, size_t operand_count) {
  if (call.opcode() != HloOpcode::kCustomCall || !IsGpuGemmTarget(call.custom_call_target()) ||
      operand_count != 2 || !call.shape().IsArray()) {
    return nullptr;
  }
  Json config = Json::parse(call.backend_config(), nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return nullptr;
  if (config.contains("gemm_backend_config")) config = config.at("gemm_backend_config");
  if (!config.is_object() || !config.contains("dot_dimension_numbers")) return nullptr;
  const std::optional<double> alpha = Number(config, "alpha_real", 1);
  const std::optional<double> alpha_imag = Number(config, "alpha_imag", 0);
  const std::optional<double> beta = Number(config, "beta", 0);
  if (alpha != 1.0 || alpha_imag != 0.0 || beta != 0.0) return nullptr;
  if (config.contains("epilogue") && config.at("epilogue") != "DEFAULT") return nullptr;
  const Json& dims = config.at("dot_dimension_numbers");
  if (!dims.is_object()) return nullptr;
  DotDimensionNumbers dn;
  const auto lc = IntList(dims, "lhs_contracting_dimensions");
  const auto rc = IntList(dims, "rhs_contracting_dimensions");
  const auto lb = IntList(dims, "lhs_batch_dimensions");
  const auto rb = IntList(dims, "rhs_batch_dimensions");
  if (!lc || !rc || !lb || !rb) return nullptr;
  dn.lhs_contracting_dimensions = *lc;
  dn.rhs_contracting_dimensions = *rc;
  dn.lhs_batch_dimensions = *lb;
  dn.rhs_batch_dimensions = *rb;
  PrecisionConfig precision;
  if (config.contains("precision_config") && config.at("precision_config").is_object() &&
      config.at("precision_config").contains("operand_precision")) {
    const Json& list = config.at("precision_config").at("operand_precision");
    if (!list.is_array()) return nullptr;
    for (const Json& p : list) {
      const std::optional<Precision> v = PrecisionOf(p);
      if (!v) return nullptr;
      precision.operand_precision.push_back(*v);
    }
  }
  auto dot = std::make_unique<HloInstruction>(HloOpcode::kDot, call.shape(), call.name());
  dot->set_location(call.location());
  dot->mutable_dot_dimension_numbers() = std::move(dn);
  dot->mutable_precision_config() = std::move(precision);
  dot->mutable_metadata() = call.metadata();
  dot->mutable_frontend_attributes() = call.frontend_attributes();
  return dot;
}

}  // namespace tpusim::hlo
