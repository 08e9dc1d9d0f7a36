// Loading an HLO module the one way every subcommand does (run, compare, compile, inspect, cpu):
// read the file (bounded, regular files only: common/file_util.h), parse it, verify it. No
// subcommand sees a module the verifier has not accepted.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "hlo/module.h"

namespace tpusim::hlo {

struct LoadedHloModule {
  std::unique_ptr<HloModule> module;
  /// The text of the module that was parsed, at its lines in the file (a `// -----`-split file:
  /// the lines before it blanked, those after it cut): diagnostics quote its lines, --scaling
  /// re-parses it.
  std::string text;
  /// What loading did that the user should know, in words (the caller prints them as warnings):
  /// today only "FILE holds N modules separated by `// -----` ...".
  std::vector<std::string> notes;
};

/// The modules of a file in the split-input-file form of XLA's and MLIR's tests (hlo-opt
/// --split-input-file): chunks separated by lines that are exactly `// -----` (surrounding blanks
/// allowed). `text` is the file; each chunk is a byte range [begin, end) of it. A text without
/// such a line is one chunk. Chunks with nothing but comments and blanks are left out.
struct SplitChunk {
  size_t begin = 0;
  size_t end = 0;
};
std::vector<SplitChunk> SplitInputFile(std::string_view text);

/// Reads, parses (ParseHloModule) and verifies (VerifyModule) `path`. A file of several modules
/// separated by `// -----` lines (SplitInputFile) loads its first module, with a note saying so;
/// locations stay those of the whole file. Errors: NotFound / InvalidArgument naming the path
/// (ReadFile), or the parser's / verifier's located `path:line:col: error: ...`.
StatusOr<LoadedHloModule> LoadHloModule(const std::string& path);

}  // namespace tpusim::hlo
