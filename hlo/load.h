// Loading an HLO module the one way every subcommand does (run, compare, compile, inspect, cpu):
// read the file (bounded, regular files only: common/file_util.h), parse it, verify it. No
// subcommand sees a module the verifier has not accepted.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "hlo/module.h"

namespace tpusim::hlo {

struct LoadedHloModule {
  std::unique_ptr<HloModule> module;
  std::string text;  // the file's text: diagnostics quote its lines, --scaling re-parses it
};

/// Reads, parses (ParseHloModule) and verifies (VerifyModule) `path`. Errors: NotFound /
/// InvalidArgument naming the path (ReadFile), or the parser's / verifier's located
/// `path:line:col: error: ...`.
StatusOr<LoadedHloModule> LoadHloModule(const std::string& path);

}  // namespace tpusim::hlo
