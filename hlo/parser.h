// HLO text -> HloModule. Accepts both dump styles (old `%name`/operand-shape style of PyTorch/XLA
// and TF, new unprefixed JAX style), every attribute in shared/reference/hlo-text-format.md, and
// skips attributes it does not know (kept as raw text). Shapes stay symbolic: nothing is allocated
// per element, so f32[1024,32,4096,4096] costs a few bytes; elided constants `{...}` store no
// values.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "hlo/module.h"
#include "hlo/shape.h"

namespace tpusim::hlo {

/// Parses a whole module. `filename` names the text in diagnostics ("<string>" if empty).
/// Errors (InvalidArgument, message `file:line:col: error: ...` + source line + caret): truncated
/// text, unbalanced brackets, unknown opcode, undefined operand or computation, duplicate names,
/// cyclic use, malformed literal, operand shape that disagrees with its definition, nesting deeper
/// than 256 levels, parameter numbers that are not 0..N-1. Never aborts or hangs on any input.
StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view filename = "<string>");

/// Reads `path` (NotFound / InvalidArgument naming it) and parses it with `path` as the filename.
StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path);

/// Parses one shape such as "f32[2,3]{1,0:T(8,128)}" or "(f32[], s32[4])"; the whole text must be a
/// shape.
StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace tpusim::hlo
