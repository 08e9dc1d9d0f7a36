#include "common/diagnostic.h"

#include <string>

namespace tpusim {

std::string LocationPrefix(std::string_view file, SourceLocation loc) {
  std::string out;
  if (!file.empty()) {
    out += file;
    out += ":";
  }
  out += std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": ";
  return out;
}

std::string FormatDiagnostic(std::string_view file, std::string_view source, SourceLocation loc,
                             std::string_view message) {
  std::string out = LocationPrefix(file, loc) + "error: ";
  out += message;
  // Find the source line `loc.line` (1-based) to show it with a caret.
  if (loc.line <= 0) return out;
  size_t start = 0;
  for (int l = 1; l < loc.line; ++l) {
    size_t nl = source.find('\n', start);
    if (nl == std::string_view::npos) return out;
    start = nl + 1;
  }
  if (start > source.size()) return out;
  size_t end = source.find('\n', start);
  std::string_view text =
      source.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  constexpr size_t kMaxShown = 200;  // very long lines (tuple shapes) are cut around the column
  size_t col = loc.column > 0 ? static_cast<size_t>(loc.column - 1) : 0;
  size_t from = 0;
  if (text.size() > kMaxShown && col > kMaxShown / 2) from = col - kMaxShown / 2;
  std::string_view shown = text.substr(from, kMaxShown);
  out += "\n  ";
  out += shown;
  out += "\n  ";
  size_t caret = col >= from ? col - from : 0;
  for (size_t i = 0; i < caret && i < shown.size(); ++i) out += (shown[i] == '\t') ? '\t' : ' ';
  out += "^";
  return out;
}

Status LocatedError(std::string_view file, std::string_view source, SourceLocation loc,
                    std::string_view message) {
  return InvalidArgument(FormatDiagnostic(file, source, loc, message));
}

}  // namespace tpusim
