// Reading inputs. Outputs are written by OutputSet (common/output_set.h), included here for the
// callers of WriteFileAtomic.
#pragma once

#include <cstdint>
#include <string>

#include "common/output_set.h"
#include "common/status.h"

namespace tpusim {

/// The largest input file tpusim reads (bytes): 4 GiB, above the largest real HLO dumps and
/// programs by two orders of magnitude; a bigger file is refused, never read until out of memory.
inline constexpr int64_t kMaxInputFileBytes = int64_t{4} << 30;

/// The whole file as bytes. Only regular files are read (also through symlinks): a device such as
/// /dev/zero, a FIFO or a socket is refused at once, never read forever or waited on. NotFound if
/// it does not exist; InvalidArgument naming the path if it is a directory or not a regular file,
/// cannot be read, or is larger than `max_bytes`.
StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes = kMaxInputFileBytes);

}  // namespace tpusim
