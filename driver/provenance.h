// Provenance: what every report records so that a number can be traced back to the build, the
// command and the chip that made it (docs/report-schema.md, `provenance`).
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "config/chip_config.h"

namespace tpusim::driver {

/// Records the process's command line (main() calls it first); CommandLine() returns it.
void SetCommandLine(int argc, const char* const* argv);
const std::vector<std::string>& CommandLine();

/// The command line as one string a POSIX shell reads back into the same arguments (words with
/// spaces or shell metacharacters are single-quoted).
std::string ShellQuote(const std::vector<std::string>& args);

/// The `provenance` object: `tpusim_version`, `git_commit` (common/build_info.h), `command_line`
/// (ShellQuote of CommandLine()), `argv`, `config_file` (the YAML the config was read from),
/// `overrides` (the --set KEY=VALUE as given, in order: {"key", "value"} objects) and
/// `effective_config` (every schema key after `base:` and --set, config::EffectiveConfigJson).
/// `config` is the chip config as loaded, before any slice derivation (the report's `slice` says
/// what was simulated).
Json ProvenanceJson(const config::ChipConfig& config);

/// `report` (an object) with `provenance` inserted right after its `schema_version`, or first when
/// it has none (objects keep key order).
Json WithProvenance(const Json& report, const config::ChipConfig& config);

}  // namespace tpusim::driver
