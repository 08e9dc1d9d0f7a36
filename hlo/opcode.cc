#include "hlo/opcode.h"

#include <array>

namespace tpusim::hlo {
namespace {

struct OpcodeInfo {
  HloOpcode opcode;
  std::string_view text;
  HloOpcodeCategory category;
};

constexpr std::array<OpcodeInfo, kHloOpcodeCount> kOpcodes = {{
#define HLO_OPCODE(enum_name, text, category) \
  {HloOpcode::enum_name, text, HloOpcodeCategory::category},
#include "hlo/opcode.def"
#undef HLO_OPCODE
}};

}  // namespace

std::string_view HloOpcodeString(HloOpcode opcode) {
  return kOpcodes[static_cast<size_t>(opcode)].text;
}

std::optional<HloOpcode> ParseHloOpcode(std::string_view text) {
  for (const OpcodeInfo& info : kOpcodes) {
    if (info.text == text) return info.opcode;
  }
  return std::nullopt;
}

HloOpcodeCategory HloOpcodeCategoryOf(HloOpcode opcode) {
  return kOpcodes[static_cast<size_t>(opcode)].category;
}

bool IsElementwise(HloOpcode opcode) {
  HloOpcodeCategory c = HloOpcodeCategoryOf(opcode);
  return c == HloOpcodeCategory::kUnary || c == HloOpcodeCategory::kBinary ||
         c == HloOpcodeCategory::kTernary;
}

bool IsCollective(HloOpcode opcode) {
  return HloOpcodeCategoryOf(opcode) == HloOpcodeCategory::kCollective;
}

bool IsTranscendental(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtan2:
    case HloOpcode::kAtanh:
    case HloOpcode::kCbrt:
    case HloOpcode::kCosh:
    case HloOpcode::kCos:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kPower:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSin:
    case HloOpcode::kSinh:
    case HloOpcode::kSqrt:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
      return true;
    default:
      return false;
  }
}

}  // namespace tpusim::hlo
