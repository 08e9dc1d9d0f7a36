#include "hlo/load.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/file_util.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {

namespace {

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// True when [begin, end) of `text` holds something besides blank lines and `//` comments.
bool HasCode(std::string_view text, size_t begin, size_t end) {
  size_t pos = begin;
  while (pos < end) {
    size_t eol = std::min(text.find('\n', pos), end);
    const std::string_view line = Trim(text.substr(pos, eol - pos));
    if (!line.empty() && line.substr(0, 2) != "//") return true;
    pos = eol + 1;
  }
  return false;
}

int LineOf(std::string_view text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

}  // namespace

std::vector<SplitChunk> SplitInputFile(std::string_view text) {
  std::vector<SplitChunk> chunks;
  size_t begin = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    if (Trim(text.substr(pos, eol - pos)) == "// -----") {
      if (HasCode(text, begin, pos)) chunks.push_back({begin, pos});
      begin = std::min(eol + 1, text.size());
    }
    pos = eol + 1;
  }
  if (HasCode(text, begin, text.size()) || chunks.empty()) chunks.push_back({begin, text.size()});
  return chunks;
}

StatusOr<LoadedHloModule> LoadHloModule(const std::string& path) {
  LoadedHloModule out;
  TPUSIM_ASSIGN_OR_RETURN(out.text, ReadFile(path));
  const std::vector<SplitChunk> chunks = SplitInputFile(out.text);
  if (chunks.size() == 1 && chunks[0].begin == 0) {
    TPUSIM_ASSIGN_OR_RETURN(out.module, ParseHloModule(out.text, path));
  } else {
    // The first module, at its own place: what comes before it is blanked (newlines kept), what
    // comes after it is cut, so every location the parser or verifier reports is the file's.
    const SplitChunk& first = chunks[0];
    std::string chunk = out.text.substr(0, first.end);
    for (size_t i = 0; i < first.begin; ++i) {
      if (chunk[i] != '\n') chunk[i] = ' ';
    }
    TPUSIM_ASSIGN_OR_RETURN(out.module, ParseHloModule(chunk, path));
    const int first_line = LineOf(out.text, first.begin);
    const int last_line = LineOf(out.text, first.end) - 1;
    out.text = std::move(chunk);  // what --scaling re-parses: the module that runs
    if (chunks.size() > 1) {
      out.notes.push_back(fmt::format(
          "{} holds {} modules separated by `// -----` lines (the --split-input-file form of "
          "XLA's tests); tpusim runs the first, lines {}-{}: save another in a file of its own "
          "to run it",
          path, chunks.size(), first_line, last_line));
    }
  }
  TPUSIM_RETURN_IF_ERROR(VerifyModule(*out.module, out.text));
  return out;
}

}  // namespace tpusim::hlo
