// HloOpcode: the HLO operations, generated from opcode.def (the one table).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpusim::hlo {

enum class HloOpcode : uint8_t {
#define HLO_OPCODE(enum_name, text, category) enum_name,
#include "hlo/opcode.def"
#undef HLO_OPCODE
};

/// Number of opcodes in the table.
inline constexpr int kHloOpcodeCount = 0
#define HLO_OPCODE(enum_name, text, category) +1
#include "hlo/opcode.def"
#undef HLO_OPCODE
    ;

/// Broad classes of opcodes; see opcode.def for the meaning of each.
enum class HloOpcodeCategory : uint8_t {
  kUnary,
  kBinary,
  kTernary,
  kCollective,
  kControlFlow,
  kOther
};

/// "get-tuple-element", "reduce-window", ... exactly as XLA prints it.
std::string_view HloOpcodeString(HloOpcode opcode);
/// The opcode spelled `text`; nullopt if there is none (the parser turns that into a located
/// error).
std::optional<HloOpcode> ParseHloOpcode(std::string_view text);
HloOpcodeCategory HloOpcodeCategoryOf(HloOpcode opcode);

/// Elementwise: unary, binary or ternary category (output element i depends on operand elements i
/// only).
bool IsElementwise(HloOpcode opcode);
/// Collective or async half of one (all-reduce, all-gather-start, collective-permute-done, ...).
bool IsCollective(HloOpcode opcode);
/// Opcodes XLA's HloCostAnalysis counts as transcendental (exp, log, tanh, logistic, sqrt, rsqrt,
/// cbrt, sin, cos, tan, atan2, erf, power, expm1, log1p; and the inverse and hyperbolic functions
/// acos, acosh, asin, asinh, atan, atanh, cosh, sinh) rather than as FLOPs.
bool IsTranscendental(HloOpcode opcode);

}  // namespace tpusim::hlo
