// Loading chip configs: YAML file -> (base: chain merged) -> --set overrides -> typed ChipConfig ->
// Validate(). Every error names the file (or "--set") and the full key path, and says what was
// expected:
//
//   configs/x.yaml: core.mxu.rows: expected a positive integer, got "abc"
//
// All such errors are InvalidArgument (exit code 2); a missing file is NotFound (also exit code 2).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/chip_config.h"

namespace tpusim::config {

/// The config used when --config is omitted (README "Configs").
inline constexpr const char* kDefaultConfigName = "tpu-v4";

/// Resolves a --config argument: an existing path as is; otherwise a bare name ("tpu-v4" or
/// "tpu-v4.yaml") looked up in $TPUSIM_CONFIG_DIR, ./configs, the installed configs beside the
/// running binary (PREFIX/bin/.. /share/tpusim/configs, cmake/TpusimInstall.cmake), then the source
/// tree's configs/ folder.
std::string ResolveConfigPath(const std::string& name_or_path);

/// Loads, merges `base:` parents (paths relative to the including file; at most 8 levels, no
/// cycles), applies `overrides` ("key.path=value", value in YAML syntax), converts and validates.
StatusOr<ChipConfig> LoadChipConfig(const std::string& name_or_path,
                                    const std::vector<std::string>& overrides = {});

/// Same, from YAML text already in memory (`filename` is used in messages and to resolve `base:`).
StatusOr<ChipConfig> LoadChipConfigFromString(const std::string& yaml, const std::string& filename,
                                              const std::vector<std::string>& overrides = {});

/// Range and consistency checks on a converted config; errors name `filename` and the key path.
Status ValidateChipConfig(const ChipConfig& config, const std::string& filename);

}  // namespace tpusim::config
