// Reading inputs and writing outputs. Outputs are written atomically (a temporary file in the same
// folder, then rename), so an interrupted or failed run never leaves a half-written report or
// trace.
#pragma once

#include <string>

#include "common/status.h"

namespace tpusim {

/// The whole file as bytes. NotFound if it does not exist, InvalidArgument if it cannot be read (a
/// directory, no permission); the message names the path.
StatusOr<std::string> ReadFile(const std::string& path);

/// Writes `contents` to `path` through `path.tmp.<pid>` + rename. InvalidArgument naming the path
/// if the folder is missing or not writable; the temporary file is removed on failure.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

/// Removes the temporary file of every WriteFileAtomic in progress. Async-signal-safe (only atomics
/// and unlink(2)): the `tpusim` command's SIGINT/SIGTERM handler calls it so that an interrupted
/// run leaves neither a partial output nor its temporary file.
void RemovePendingTemporaryFiles();

}  // namespace tpusim
