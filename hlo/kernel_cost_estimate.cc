#include "hlo/kernel_cost_estimate.h"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace tpusim::hlo {
namespace {

StatusOr<int64_t> Figure(const nlohmann::json& estimate, const char* field, bool required) {
  auto it = estimate.find(field);
  if (it == estimate.end()) {
    if (!required) return int64_t{0};
    return InvalidArgument(fmt::format("cost_estimate has no \"{}\"", field));
  }
  const bool too_large = it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX;
  if (!it->is_number_integer() || too_large || it->get<int64_t>() < 0) {
    return InvalidArgument(
        fmt::format("cost_estimate \"{}\" is {}: expected an integer >= 0", field, it->dump()));
  }
  return it->get<int64_t>();
}

// RFC 8259 JSON, strictly: a parse error names its line and column within backend_config (NaN,
// 1e400 and invalid UTF-8 are errors), and an object naming a key twice is refused (RFC 8259 leaves
// its meaning open; nlohmann keeps the last, Python's json the last, protobuf's reader refuses it).
StatusOr<nlohmann::json> ParseStrictJson(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // per open object
  std::string duplicate;
  const nlohmann::json::parser_callback_t callback =
      [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        if (event == E::object_start) keys.emplace_back();
        if (event == E::object_end && !keys.empty()) keys.pop_back();
        if (event == E::key && !keys.empty() && duplicate.empty() &&
            !keys.back().insert(parsed.get<std::string>()).second) {
          duplicate = parsed.get<std::string>();
        }
        return true;
      };
  try {
    nlohmann::json j = nlohmann::json::parse(text, callback);
    if (!duplicate.empty()) {
      return InvalidArgument(
          fmt::format("backend_config names the key \"{}\" twice in one object", duplicate));
    }
    return j;
  } catch (const nlohmann::json::exception& e) {
    std::string why = e.what();
    if (const size_t at = why.find("] "); at != std::string::npos) why.erase(0, at + 2);
    return InvalidArgument("backend_config is not JSON: " + why);
  }
}

}  // namespace

bool IsMosaicKernel(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kCustomCall &&
         inst.custom_call_target() == kMosaicKernelTarget;
}

KernelCostEstimate LeastKernelCost(const HloInstruction& inst) {
  int64_t bytes = inst.shape().ByteSize();  // saturating sums: absurd shapes stay absurd
  for (const HloInstruction* op : inst.operands()) {
    bytes = bytes > INT64_MAX - op->shape().ByteSize() ? INT64_MAX : bytes + op->shape().ByteSize();
  }
  KernelCostEstimate e;
  e.bytes_accessed = bytes;
  return e;
}

StatusOr<std::optional<KernelCostEstimate>> ReadKernelCostEstimate(const HloInstruction& inst) {
  // The braced form of backend_config is kept verbatim, braces included: the JSON text itself.
  const std::string& text = inst.backend_config();
  if (text.empty()) return std::optional<KernelCostEstimate>();
  TPUSIM_ASSIGN_OR_RETURN(const nlohmann::json config, ParseStrictJson(text));
  if (!config.is_object()) return InvalidArgument("backend_config is not a JSON object");
  auto cc = config.find("custom_call_config");
  if (cc == config.end()) return std::optional<KernelCostEstimate>();
  if (!cc->is_object()) return InvalidArgument("custom_call_config is not a JSON object");
  auto est = cc->find("cost_estimate");
  if (est == cc->end() || est->is_null()) return std::optional<KernelCostEstimate>();
  if (!est->is_object()) return InvalidArgument("cost_estimate is not a JSON object");
  KernelCostEstimate e;
  TPUSIM_ASSIGN_OR_RETURN(e.flops, Figure(*est, "flops", true));
  TPUSIM_ASSIGN_OR_RETURN(e.transcendentals, Figure(*est, "transcendentals", true));
  TPUSIM_ASSIGN_OR_RETURN(e.bytes_accessed, Figure(*est, "bytes_accessed", true));
  TPUSIM_ASSIGN_OR_RETURN(e.remote_bytes, Figure(*est, "remote_bytes_transferred", false));
  return std::optional<KernelCostEstimate>(e);
}

}  // namespace tpusim::hlo
