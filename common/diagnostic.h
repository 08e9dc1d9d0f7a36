// Located error messages in the form compilers use, so editors and users can jump to the spot:
//
//   model.hlo:41:17: error: unknown opcode 'dott'
//     %dot.3 = f32[4,4]{1,0} dott(f32[4,8]{1,0} %a, f32[8,4]{1,0} %b)
//                            ^
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace tpusim {

/// A 1-based line and column in a named source (a file path, or "<string>" for in-memory text).
struct SourceLocation {
  int line = 0;
  int column = 0;
};

/// The location prefix `file:line:col: ` (with its trailing space) that every located message
/// starts with; `file` may be empty (then the `file:` part is left out). It adds no severity, so
/// a caller that keeps a Status's own code (e.g. the evaluator's `in '%name': ...` context, a
/// pass's Unimplemented refusal) writes the same location text as FormatDiagnostic.
std::string LocationPrefix(std::string_view file, SourceLocation loc);

/// Formats `file:line:col: error: message`, followed by the source line and a caret under `column`
/// when `source` holds that line. `file` may be empty (then the `file:` part is left out).
std::string FormatDiagnostic(std::string_view file, std::string_view source, SourceLocation loc,
                             std::string_view message);

/// An InvalidArgument Status whose message is FormatDiagnostic(...).
Status LocatedError(std::string_view file, std::string_view source, SourceLocation loc,
                    std::string_view message);

}  // namespace tpusim
